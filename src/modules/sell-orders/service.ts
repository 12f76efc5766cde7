import { randomUUID } from 'node:crypto';
import { sql, type SqlBool } from 'kysely';
import type { Db, Executor, Trx } from '../../db/database.ts';
import { listPage } from '../../http/pagination.ts';
import type { MerchantScope } from '../../http/principal.ts';
import type { Clock } from '../../lib/clock.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import type { Currency } from '../../lib/money.ts';
import { confirmFills, type FillReversal } from '../buy-orders/ledger.ts';
import type { Ledger } from '../ledger/port.ts';
import type { BankDirectory } from '../reference/banks.ts';
import type { PayoutDestinationInput } from '../reference/payout-destinations.ts';
import type { ReceiptValidator, ValidatorVerdict } from '../validators/port.ts';
import { CASH_LEG_CODES, decodeReceipt } from '../validators/receipt.ts';
import { asksProvider, checkedByProvider, judgeSlip } from '../validators/slips.ts';
import { failCashLeg, refundPayoutEnded } from './cash-leg.ts';
import { closePending } from './close.ts';
import { resolvePayoutDestination } from './destinations.ts';
import { everyFillVerified, expectedCashLeg, retriesUsed } from './expected.ts';
import { moveSellOrderPay, reserveForSale } from './ledger.ts';
import { emitSellOrderEvent, presentSellOrder, type SellOrderView } from './present.ts';
import { cashLegExhausted, findOwnedSellOrder, findSellOrder, lockOwnedSellOrder, transition } from './state.ts';
import type { SellOrderRow, SellOrderStatus } from './tables.ts';
import {
  batchChangedConcurrently,
  cashLegNotInFlight,
  changedWhileEvidenceChecked,
  refundPayoutAwaitsPayee,
  refundPayoutUnderway,
  sellOrderNotCancellable,
} from './errors.ts';

export interface SellOrdersDeps {
  db: Db;
  clock: Clock;
  ledger: Ledger;
  validator: ReceiptValidator;
  /** The Thai bank directory payout destinations are checked against. */
  banks: BankDirectory;
  pending_ttl_hours: number;
  cash_leg_retry_max: number;
  cash_leg_retry_timeout_hours: number;
  /** Called in the failing transaction when a cash leg is given up (the auto-open dispute switch plugs in here). */
  onCashLegFailure?: CashLegFailureHook;
  /**
   * Called in the ending transaction when an order that pays a refund out completes or fails (the refunds module,
   * above this one, plugs in here once it has started).
   */
  onRefundPayoutEnded?: RefundPayoutEndedHook;
}

/** An order paying a refund out has ended (`completed` or `failed`), under its row lock. */
export type RefundPayoutEndedHook = (trx: Trx, order: SellOrderRow, at: Date) => Promise<void>;

/** What a given-up cash leg hands on: the order and the fills taken back from its buyers. */
export type CashLegFailureHook = (
  trx: Trx,
  order: SellOrderRow,
  at: Date,
  reversals: readonly FillReversal[],
) => Promise<void>;

export interface CreateSellOrderInput {
  amount_micro_pay: number;
  currency: 'PAY';
  target_currency: Currency;
  target_fiat_amount: number;
  /** Where the buyers pay this seller; absent: the merchant's default destination. */
  payout_destination?: PayoutDestinationInput | undefined;
}

export interface ConfirmCashLegInput {
  receipt_base64: string;
  content_type: string;
  reference?: string | undefined;
  /** The fill (its buy order) whose transfer the slip shows; default: the oldest fill without a verified transfer. */
  buy_order_id?: string | undefined;
}

export interface ListSellOrdersQuery {
  status?: SellOrderStatus[] | undefined;
  currency?: string | undefined;
  target_currency?: string | undefined;
  created_after?: string | undefined;
  created_before?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

/**
 * The sell order id is derived from the merchant's Idempotency-Key, so the ledger reserve (keyed by the id) of a
 * request whose commit failed after an HTTP ledger already applied it is replayed by the retry, never doubled.
 */
export function idFromIdempotencyKey(scope: MerchantScope, key: string | undefined): string {
  if (!key) return randomUUID();
  const hex = sha256Hex(`sell_order|${scope.merchant_id}|${scope.is_sandbox}|${key.toLowerCase()}`);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export type NewOrder = Pick<
  SellOrderRow,
  | 'id'
  | 'merchant_id'
  | 'is_sandbox'
  | 'amount_micro_pay'
  | 'target_currency'
  | 'target_fiat_amount'
  | 'payout_destination'
  | 'refund_id'
>;

/** A new `pending` order's row; its reserve is the caller's to move (last in the transaction). */
export async function insertPendingOrder(
  deps: Pick<SellOrdersDeps, 'pending_ttl_hours'>,
  trx: Trx,
  now: Date,
  order: NewOrder,
): Promise<SellOrderRow> {
  return trx
    .insertInto('sell_orders')
    .values({
      ...order,
      status: 'pending',
      currency: 'PAY',
      filled_micro_pay: 0,
      filled_fiat_amount: 0,
      expires_at: new Date(now.getTime() + deps.pending_ttl_hours * 3600_000),
      payout_destination: JSON.stringify(order.payout_destination),
      matched_buy_order_id: null,
      mint_source_account: null,
      cash_leg_attempts: 0,
      cash_leg_retries_used: 0,
      last_cash_leg_attempt_at: null,
      last_cash_leg_outcome: null,
      failure_reason: null,
      created_at: now,
      matched_at: null,
      cash_leg_requested_at: null,
      completed_at: null,
      failed_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Creates a pending sell order and moves its PAY from available to reserve in the same transaction (at most available
 * PAY less unconfirmed fills, else 409 SELL_ORDER_INSUFFICIENT_BALANCE). The one create path: the routes call it, and
 * so may any flow that pays PAY out through the payout network.
 */
export async function createSellOrder(
  deps: SellOrdersDeps,
  trx: Trx,
  scope: MerchantScope,
  input: CreateSellOrderInput,
  idempotency_key?: string,
): Promise<SellOrderView> {
  const now = deps.clock.now();
  const payout_destination = await resolvePayoutDestination(trx, deps.banks, scope, input);
  let id = idFromIdempotencyKey(scope, idempotency_key);
  // A key reused after its 7-day retention would derive an id that exists: take a fresh one.
  if (await findSellOrder(trx, id)) id = randomUUID();
  const order = await insertPendingOrder(deps, trx, now, {
    id,
    merchant_id: scope.merchant_id,
    is_sandbox: scope.is_sandbox,
    amount_micro_pay: input.amount_micro_pay,
    target_currency: input.target_currency,
    target_fiat_amount: input.target_fiat_amount,
    payout_destination,
    refund_id: null,
  });
  // Last in the transaction: with the HTTP ledger a refusal or outage rolls the row back and nothing is kept.
  await reserveForSale(deps.ledger, trx, order);
  return presentSellOrder(order);
}

export async function getSellOrder(
  deps: Pick<SellOrdersDeps, 'db'>,
  scope: MerchantScope,
  id: string,
): Promise<SellOrderView> {
  return presentSellOrder(await findOwnedSellOrder(deps.db, scope, id));
}

export async function listSellOrders(
  deps: Pick<SellOrdersDeps, 'db'>,
  scope: MerchantScope,
  query: ListSellOrdersQuery,
) {
  let select = deps.db
    .selectFrom('sell_orders')
    .selectAll()
    .where('merchant_id', '=', scope.merchant_id)
    .where('is_sandbox', '=', scope.is_sandbox);
  if (query.status?.length) select = select.where('status', 'in', query.status);
  if (query.currency) select = select.where('currency', '=', query.currency as 'PAY');
  if (query.target_currency) select = select.where('target_currency', '=', query.target_currency);
  if (query.created_after) select = select.where('created_at', '>=', new Date(query.created_after));
  if (query.created_before) select = select.where('created_at', '<', new Date(query.created_before));
  return listPage(select, query, presentSellOrder);
}

/**
 * Merchant cancel, only from `pending`. Nothing filled: failed/cancelled_by_merchant and the reserve is released. Partly
 * filled: the unfilled rest is released and the order becomes `matched` for the filled part (its cash leg is owed).
 */
export async function cancelSellOrder(
  deps: SellOrdersDeps,
  trx: Trx,
  scope: MerchantScope,
  id: string,
): Promise<SellOrderView> {
  const order = await lockOwnedSellOrder(trx, scope, id);
  if (order.status !== 'pending') throw sellOrderNotCancellable(order.status);
  if (refundPayoutUnderwayFor(order)) throw refundPayoutUnderway(order.status);
  return closePending(deps, trx, order, deps.clock.now(), 'cancelled_by_merchant');
}

/** A refund's payout partly paid is owed to the buyer in full: cancel would cut it short, so it is refused. */
function refundPayoutUnderwayFor(order: { refund_id: string | null; filled_micro_pay: number }): boolean {
  return order.refund_id !== null && order.filled_micro_pay > 0;
}

/**
 * What the seller may do to these orders that pay refunds out (the others are ordinary): cancel one only while
 * nothing of it is filled (a refund partly paid is owed in full), and confirm its cash leg only where the validator
 * checks the slip against the bank's record (a provider); otherwise the refund's buyer confirms it on the claim page.
 */
export async function refundPayoutRules(
  deps: Pick<SellOrdersDeps, 'db' | 'validator'>,
  scope: MerchantScope,
  ids: readonly string[],
): Promise<{ refund_payouts: Set<string>; not_cancellable: Set<string>; seller_confirms_refund_payouts: boolean }> {
  const rows =
    ids.length === 0
      ? []
      : await deps.db
          .selectFrom('sell_orders')
          .select(['id', 'refund_id', 'filled_micro_pay'])
          .where('merchant_id', '=', scope.merchant_id)
          .where('is_sandbox', '=', scope.is_sandbox)
          .where('id', 'in', ids)
          .where('refund_id', 'is not', null)
          .execute();
  return {
    refund_payouts: new Set(rows.map((row) => row.id)),
    not_cancellable: new Set(rows.filter(refundPayoutUnderwayFor).map((row) => row.id)),
    seller_confirms_refund_payouts: asksProvider(deps.validator),
  };
}

export interface CashLegEvidence {
  image: Uint8Array;
  verdict: ValidatorVerdict | null;
  /** The fill whose transfer the slip was checked against. */
  buy_order_id: string | null;
}

/**
 * The part of confirm-cash-leg that happens before the transaction: evidence decoding, the ownership check and the
 * validator call (an outbound HTTP call with EasySlip, so it must not hold a transaction, above all PGlite's one
 * connection). The validator is only asked while the order is in flight and not already out of retries.
 */
export async function checkCashLegEvidence(
  deps: SellOrdersDeps,
  scope: MerchantScope,
  id: string,
  input: ConfirmCashLegInput,
): Promise<CashLegEvidence> {
  const image = decodeReceipt(input, CASH_LEG_CODES);
  const order = await findOwnedSellOrder(deps.db, scope, id);
  if (order.status !== 'cash_leg_in_flight' || cashLegExhausted(order, deps.clock.now(), deps))
    return { image, verdict: null, buy_order_id: null };
  // The buyer's transfer into this seller's own destination, of the fill's amount. judgeSlip records a validator
  // that crashed as unverified, as a payment proof's would be.
  const expected = await expectedCashLeg(deps.db, order, input.buy_order_id);
  const { verdict } = await judgeSlip(deps, {
    owner: expected.slip_owner,
    is_sandbox: order.is_sandbox,
    image,
    content_type: input.content_type,
    expect: expected.check,
  });
  return { image, verdict, buy_order_id: expected.buy_order_id };
}

/**
 * Applies a confirm-cash-leg in the request's transaction. Verified: attempt counted, `completed`, the reserve burned
 * (key = sell order id) and `sell_order.completed`. Any other verdict: attempt counted, stays in flight. An order the
 * sweep's rule already gave up on is failed here (lazily, as the sweeper would) and answered 200 `failed`; any other
 * status is 409 SELL_ORDER_BAD_STATE. A ledger outage throws 502 and the whole transaction (attempt included) rolls back.
 */
export async function applyCashLeg(
  deps: SellOrdersDeps,
  trx: Trx,
  scope: MerchantScope,
  id: string,
  input: ConfirmCashLegInput,
  evidence: CashLegEvidence,
): Promise<SellOrderView> {
  const now = deps.clock.now();
  let order = await lockOwnedSellOrder(trx, scope, id);
  if (cashLegExhausted(order, now, deps)) order = await failCashLeg(deps, trx, order, now);
  if (order.status === 'failed' && order.failure_reason === 'cash_leg_retry_exhausted') return presentSellOrder(order);
  if (order.status !== 'cash_leg_in_flight') throw cashLegNotInFlight(order.status);
  const verdict = evidence.verdict;
  if (!verdict) throw changedWhileEvidenceChecked();
  // The buyer of a refund is its payee, not this seller: the seller's slip counts only where a provider checked it
  // against the bank's record; otherwise the buyer confirms on the refund's claim page (DESIGN 3b).
  if (order.refund_id !== null && !checkedByProvider(verdict)) throw refundPayoutAwaitsPayee(verdict.outcome);

  const attempt_number = order.cash_leg_attempts + 1;
  await trx
    .insertInto('sell_order_cash_leg_attempts')
    .values({
      id: randomUUID(),
      sell_order_id: order.id,
      attempt_number,
      outcome: verdict.outcome,
      reason: verdict.reason ?? null,
      reference: input.reference ?? verdict.reference ?? null,
      content_type: input.content_type,
      receipt_sha256: sha256Hex(evidence.image),
      validator_kind: verdict.validator_kind,
      validator_response: JSON.stringify(verdict.response),
      buy_order_id: evidence.buy_order_id,
      created_at: now,
    })
    .execute();
  const attempt = {
    cash_leg_attempts: attempt_number,
    cash_leg_retries_used: await retriesUsed(trx, order.id),
    last_cash_leg_attempt_at: now,
    last_cash_leg_outcome: verdict.outcome,
  };
  // A fill stops being unconfirmed when its own transfer is verified: its buyer may then cash its PAY out.
  if (verdict.outcome === 'verified') await confirmFills(trx, order.id, evidence.buy_order_id, now);
  if (verdict.outcome !== 'verified' || !(await everyFillVerified(trx, order, evidence.buy_order_id))) {
    const updated = await trx
      .updateTable('sell_orders')
      .set(attempt)
      .where('id', '=', order.id)
      .where('status', '=', 'cash_leg_in_flight')
      .returningAll()
      .executeTakeFirstOrThrow();
    return presentSellOrder(updated);
  }
  const completed = await transition(trx, order, 'completed', now, attempt);
  await confirmFills(trx, order.id, null, now);
  await moveSellOrderPay(
    deps.ledger,
    trx,
    order,
    'burn',
    order.filled_micro_pay,
    `sell order ${order.id} cash leg confirmed`,
  );
  const view = await emitSellOrderEvent(trx, now, completed, 'sell_order.completed');
  await refundPayoutEnded(deps, trx, completed, now);
  return view;
}

/**
 * For the matcher: a window of the sell book of one fiat currency (pending, unexpired, oldest first), only orders whose
 * asking price (target_fiat_amount per PAY) is at or below `bid` (fiat_amount per PAY of the best buy waiting), compared
 * exactly by cross-multiplication in numeric. Locked for the pass (SKIP LOCKED).
 */
export async function eligibleSellsWindow(
  trx: Trx,
  scope: { is_sandbox: boolean; currency: string; now: Date },
  bid: { fiat_amount: number; amount_micro_pay: number },
  limit: number,
  after?: { created_at: Date; id: string },
): Promise<SellOrderRow[]> {
  let select = trx
    .selectFrom('sell_orders')
    .selectAll()
    .where('status', '=', 'pending')
    .where('is_sandbox', '=', scope.is_sandbox)
    .where('target_currency', '=', scope.currency)
    .where('expires_at', '>', scope.now)
    .where(
      sql<SqlBool>`target_fiat_amount::numeric * ${bid.amount_micro_pay}::numeric <= ${bid.fiat_amount}::numeric * amount_micro_pay::numeric`,
    )
    .where(sql<SqlBool>`filled_micro_pay < amount_micro_pay`);
  if (after) select = select.where(sql<SqlBool>`(created_at, id) > (${after.created_at}, ${after.id})`);
  return select.orderBy('created_at').orderBy('id').limit(limit).forUpdate().skipLocked().execute();
}

export interface SellFillUpdate {
  sell_order_id: string;
  filled_micro_pay: number;
  filled_fiat_amount: number;
  first_buy_order_id: string;
  /** True when the sell is now filled in full: pending -> matched (its cash leg is then requested). */
  complete: boolean;
}

/**
 * For the matcher: new fill totals of a batch of sell orders in one statement, remembering the issuance account the
 * buyers' PAY came from (the completion burn goes back to it). `WHERE status = 'pending'` on locked rows: a count that
 * differs fails the batch with 409 instead of applying it.
 */
export async function applySellFills(
  trx: Trx,
  updates: readonly SellFillUpdate[],
  mint_source_account: string,
  at: Date,
): Promise<void> {
  if (updates.length === 0) return;
  const values = sql.join(
    updates.map(
      (u) =>
        sql`(${u.sell_order_id}::uuid, ${u.filled_micro_pay}::bigint, ${u.filled_fiat_amount}::bigint, ${u.first_buy_order_id}::uuid, ${u.complete}::boolean)`,
    ),
  );
  const result = await sql`
    update sell_orders as s set
      filled_micro_pay = v.filled, filled_fiat_amount = v.fiat,
      matched_buy_order_id = coalesce(s.matched_buy_order_id, v.buy_order_id), mint_source_account = ${mint_source_account},
      status = case when v.complete then 'matched' else s.status end,
      matched_at = case when v.complete then ${at}::timestamptz else s.matched_at end
    from (values ${values}) as v(sell_order_id, filled, fiat, buy_order_id, complete)
    where s.id = v.sell_order_id and s.status = 'pending'`.execute(trx);
  if (Number(result.numAffectedRows ?? 0) !== updates.length) throw batchChangedConcurrently();
}

/** For disputes: a sell order by id, whatever its owner (the caller decides what the owner may see). */
export async function sellOrderForDispute(executor: Executor, id: string): Promise<SellOrderRow | undefined> {
  return findSellOrder(executor, id);
}
