import { sql, type ExpressionBuilder } from 'kysely';
import { AppError, notFound, type ErrorCode } from '../lib/errors.ts';
import type { MerchantScope } from './principal.ts';

/**
 * The one ownership rule: what a merchant gets for a resource that is not its own.
 *
 * - The other mode's row does not exist for the caller: 404 NOT_FOUND, always.
 * - Another merchant's row is 403 only where the contract says so: its section 5 gives 403 to a non-owner on the
 *   sell-order, buy-order, dispute and balance endpoints, and its section 7 names the code for some of them
 *   (`SELL_ORDER_NOT_OWNER`, `GATEWAY_DISPUTE_CROSS_MERCHANT`, `PENDING_FUNDS_NOT_RECEIVER` for receiver-confirm,
 *   `FORBIDDEN` for the balance). Where it gives 403 without a code, `FORBIDDEN`.
 * - Everywhere else (payments, refunds, pending-funds reads, settlements, quote locks, webhook endpoints and deliveries),
 *   another merchant's row is 404 NOT_FOUND like a row that does not exist, as Stripe does, so existence is not
 *   disclosed: their rules have `other_merchant: null`.
 *
 * Every merchant-scoped single-row lookup reads the row by id and passes it through `owned`/`ownedBy` with its rule
 * here; lists filter on the caller's merchant and mode in SQL.
 */
export interface OwnershipRule {
  /** How `404 ... not found` names the resource. */
  noun: string;
  /** 403 code for another merchant's row; null answers 404 like a missing row. */
  other_merchant: ErrorCode | null;
  message: string;
}

export const OWNERSHIP = {
  sell_order: {
    noun: 'Sell order',
    other_merchant: 'SELL_ORDER_NOT_OWNER',
    message: 'This sell order belongs to another merchant',
  },
  buy_order: { noun: 'Buy order', other_merchant: 'FORBIDDEN', message: 'This buy order belongs to another merchant' },
  dispute: {
    noun: 'Dispute',
    other_merchant: 'GATEWAY_DISPUTE_CROSS_MERCHANT',
    message: "This dispute is on another merchant's sell order",
  },
  /** Opening a dispute names a sell order: the contract's code for "dispute on a sell order owned by another merchant". */
  disputed_sell_order: {
    noun: 'Sell order',
    other_merchant: 'GATEWAY_DISPUTE_CROSS_MERCHANT',
    message: 'The sell order belongs to another merchant',
  },
  pending_funds: { noun: 'Pending funds', other_merchant: null, message: '' },
  pending_funds_confirm: {
    noun: 'Pending funds',
    other_merchant: 'PENDING_FUNDS_NOT_RECEIVER',
    message: 'Only the receiver of these pending funds may confirm them',
  },
  payment: { noun: 'Payment', other_merchant: null, message: '' },
  refund: { noun: 'Refund', other_merchant: null, message: '' },
  payment_link: { noun: 'Payment link', other_merchant: null, message: '' },
  settlement: { noun: 'Settlement', other_merchant: null, message: '' },
  quote_lock: { noun: 'Quote lock', other_merchant: null, message: '' },
  webhook_endpoint: { noun: 'Webhook endpoint', other_merchant: null, message: '' },
  webhook_delivery: { noun: 'Webhook delivery', other_merchant: null, message: '' },
} as const satisfies Record<string, OwnershipRule>;

/** Answers the row when it is the caller's own in the caller's mode; otherwise throws what the rule says. */
export function ownedBy<Row extends { is_sandbox: boolean }>(
  row: Row | undefined,
  owner_id: (row: Row) => string,
  scope: MerchantScope,
  rule: OwnershipRule,
): Row {
  if (!row || row.is_sandbox !== scope.is_sandbox) throw notFound(rule.noun);
  if (owner_id(row) !== scope.merchant_id)
    throw rule.other_merchant ? new AppError(rule.other_merchant, rule.message) : notFound(rule.noun);
  return row;
}

/** `ownedBy` for the usual row whose owner is its `merchant_id`. */
export const owned = <Row extends { is_sandbox: boolean; merchant_id: string }>(
  row: Row | undefined,
  scope: MerchantScope,
  rule: OwnershipRule,
): Row => ownedBy(row, (found) => found.merchant_id, scope, rule);

/**
 * The SQL side of the rule, for lists and lookups by other keys: one merchant's rows in one mode. `owner` names the
 * column holding the owning merchant. Use as `.where(ofMerchant(scope))`.
 */
export function ofMerchant(scope: MerchantScope, owner = 'merchant_id') {
  return <DB, TB extends keyof DB>(eb: ExpressionBuilder<DB, TB>) =>
    eb.and([eb(sql.ref(owner), '=', scope.merchant_id), eb(sql.ref('is_sandbox'), '=', scope.is_sandbox)]);
}
