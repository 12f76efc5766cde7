import { randomUUID } from 'node:crypto';
import type { Db, Trx } from '../../db/database.ts';
import { ofMerchant } from '../../http/ownership.ts';
import { listPage } from '../../http/pagination.ts';
import type { MerchantScope } from '../../http/principal.ts';
import type { Clock } from '../../lib/clock.ts';
import { randomBase62, sha256Hex } from '../../lib/crypto.ts';
import { decimalToMinor, isCurrency, type Currency } from '../../lib/money.ts';
import type { Ledger } from '../ledger/port.ts';
import { cashOutAllowance } from '../sell-orders/ledger.ts';
import { cancelRefundPayout, lockRefundPayout } from '../sell-orders/refund-payouts.ts';
import type { SellOrdersDeps } from '../sell-orders/service.ts';
import { amountReceived } from '../payments/present.ts';
import { creditedMicroPay, lockPaymentForRefund, recordRefundSucceeded, REFUNDABLE } from '../payments/refunds.ts';
import type { BankDirectory } from '../reference/banks.ts';
import { parsePayoutDestination } from '../reference/payout-destinations.ts';
import type { ReceiptValidator } from '../validators/port.ts';
import {
  paymentNotRefundable,
  refundAmountInvalid,
  refundExceedsPayment,
  refundInsufficientBalance,
  refundNotCancellable,
  refundPayoutUnderway,
  refundSlipWaitsForBuyer,
} from './errors.ts';
import { holdMicroPay, moveRefundHold } from './ledger.ts';
import { inRefundTerms, payoutDeps, startRefundPayout } from './payout.ts';
import { emitRefundEvents, latestProofs, presentRefund, viewOfRefund, type RefundView } from './present.ts';
import type { CreateRefundInput } from './schema.ts';
import { CANCELLABLE, COUNTED, findOwnedRefund, lockOwnedRefund, transition } from './state.ts';
import type { RefundRow, RefundStatus } from './tables.ts';

export interface RefundsDeps {
  db: Db;
  clock: Clock;
  public_base_url: string;
  ledger: Ledger;
  banks: BankDirectory;
  validator: ReceiptValidator;
  claim_days: number;
  confirm_days: number;
  /** The payout network's sell orders, which pay a live pay_balance refund out once its destination is known. */
  sell_orders?: SellOrdersDeps | undefined;
  /** Wakes the matcher when a refund's sell order joins the book (in-process; other processes poll). */
  onDestinationKnown?: () => void;
}

export interface ListRefundsQuery {
  payment_id?: string | undefined;
  status?: RefundStatus[] | undefined;
  cursor?: string | undefined;
  limit: number;
}

/** Payment statuses a refund may be made of: they received money. */

/**
 * The refund id is derived from the merchant's Idempotency-Key (as a sell order's is), so the ledger hold (keyed by
 * the id) of a request whose commit failed after an HTTP ledger applied it is replayed by the retry, never doubled.
 */
function idFromIdempotencyKey(scope: MerchantScope, key: string | undefined): string {
  if (!key) return randomUUID();
  const hex = sha256Hex(`refund|${scope.merchant_id}|${scope.is_sandbox}|${key.toLowerCase()}`);
  const variant = ((parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function parseAmount(amount: number | string | undefined, currency: Currency): number | undefined {
  if (amount === undefined) return undefined;
  if (typeof amount === 'number') return amount;
  const minor = decimalToMinor(amount, currency);
  if (minor === null) throw refundAmountInvalid(`amount has more decimals than ${currency} has`);
  if (minor <= 0) throw refundAmountInvalid('amount must be greater than 0');
  return minor;
}

/** Refunds of a payment that count against what it received (not failed, not canceled), minor units. */
async function countedMinor(trx: Trx, payment_id: string): Promise<number> {
  const row = await trx
    .selectFrom('refunds')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('amount_minor'), eb.lit(0)).as('total'))
    .where('payment_id', '=', payment_id)
    .where('status', 'in', COUNTED)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

/**
 * POST /v1/payments/{id}/refunds, in the idempotency key's transaction. The payment row is locked first, so refunds of
 * one payment are checked one after another against what it received (409 REFUND_EXCEEDS_PAYMENT); a pay_balance
 * refund's PAY moves to the refund hold in the same transaction (409 REFUND_INSUFFICIENT_BALANCE).
 */
export async function createRefund(
  deps: RefundsDeps,
  trx: Trx,
  scope: MerchantScope,
  payment_id: string,
  input: CreateRefundInput,
  idempotency_key?: string,
): Promise<RefundView> {
  const now = deps.clock.now();
  const payment = await lockPaymentForRefund(trx, scope, payment_id);
  const currency = payment.currency;
  if (!isCurrency(currency)) throw paymentNotRefundable(payment.status);
  const requested = parseAmount(input.amount, currency);
  const destination = input.destination
    ? await parsePayoutDestination(input.destination, {
        banks: deps.banks,
        currency,
        prefix: 'body.destination',
        executor: trx,
      })
    : null;
  if (!REFUNDABLE.includes(payment.status)) throw paymentNotRefundable(payment.status);
  const received = amountReceived(payment);
  const remaining = received - (await countedMinor(trx, payment.id));
  const amount_minor = requested ?? remaining;
  if (amount_minor <= 0 || amount_minor > remaining) throw refundExceedsPayment(Math.max(0, remaining), amount_minor);

  const funding = input.funding ?? 'merchant_transfer';
  let hold_micro_pay: number | null = null;
  if (funding === 'pay_balance') {
    hold_micro_pay = holdMicroPay(await creditedMicroPay(trx, payment), amount_minor, received);
  }
  const row = await trx
    .insertInto('refunds')
    .values({
      id: idFromIdempotencyKey(scope, idempotency_key),
      merchant_id: scope.merchant_id,
      is_sandbox: scope.is_sandbox,
      payment_id: payment.id,
      amount_minor,
      currency,
      status: destination ? 'pending' : 'requires_action',
      reason: input.reason ?? null,
      funding,
      destination: destination ? JSON.stringify(destination) : null,
      claim_token: randomBase62(32),
      claim_expires_at: new Date(now.getTime() + deps.claim_days * 24 * 3600_000),
      failure_reason: null,
      metadata: JSON.stringify(input.metadata ?? {}),
      hold_micro_pay,
      sell_order_id: null,
      awaiting_buyer_since: null,
      created_at: now,
      destination_at: destination ? now : null,
      succeeded_at: null,
      failed_at: null,
      canceled_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (hold_micro_pay !== null) await ensureCashOutCovers(deps, trx, scope, hold_micro_pay);
  // Last in the transaction: with the HTTP ledger a refusal rolls the row back and nothing is kept.
  await moveRefundHold(deps.ledger, trx, row, 'hold');
  const paying = await startRefundPayout(deps, trx, row, now);
  const view = await emitRefundEvents(trx, now, deps.public_base_url, paying, 'created');
  if (paying.sell_order_id !== null) deps.onDestinationKnown?.();
  return view;
}

/**
 * A refund from PAY cashes PAY out to the buyer, so it may take only what a sell order could (DESIGN 3b): available
 * PAY less the PAY of fills whose cash leg is not confirmed yet (409 REFUND_INSUFFICIENT_BALANCE), under the same
 * cash-out lock as sell orders.
 */
async function ensureCashOutCovers(deps: RefundsDeps, trx: Trx, scope: MerchantScope, hold_micro_pay: number) {
  const { available, unconfirmed } = await inRefundTerms(() => cashOutAllowance(deps.ledger, trx, scope));
  if (available - unconfirmed < hold_micro_pay)
    throw refundInsufficientBalance([
      {
        field: 'body.amount',
        message: `needs a hold of ${hold_micro_pay} micro-PAY; you may cash out ${Math.max(0, available - unconfirmed)} (available ${available}, of which ${unconfirmed} from fills whose cash leg is not confirmed yet)`,
      },
    ]);
}

export async function getRefund(deps: Pick<RefundsDeps, 'db' | 'public_base_url'>, scope: MerchantScope, id: string) {
  return viewOfRefund(deps.db, await findOwnedRefund(deps.db, scope, id), deps.public_base_url);
}

export async function listRefunds(
  deps: Pick<RefundsDeps, 'db' | 'public_base_url'>,
  scope: MerchantScope,
  query: ListRefundsQuery,
) {
  let select = deps.db.selectFrom('refunds').selectAll().where(ofMerchant(scope));
  if (query.payment_id) select = select.where('payment_id', '=', query.payment_id);
  if (query.status?.length) select = select.where('status', 'in', query.status);
  const page = await listPage(select, query, (row) => row);
  const proofs = await latestProofs(
    deps.db,
    page.data.map((row) => row.id),
  );
  return { ...page, data: page.data.map((row) => presentRefund(row, deps.public_base_url, proofs.get(row.id))) };
}

/**
 * Ends a refund short of success (`failed` with its reason, or `canceled`) inside `trx`: the move, a pay_balance hold
 * back to available (when no sell order took it yet), and its events.
 */
export async function endRefund(
  deps: Pick<RefundsDeps, 'ledger' | 'public_base_url'>,
  trx: Trx,
  refund: RefundRow,
  now: Date,
  status: 'failed' | 'canceled',
  failure_reason: string | null,
): Promise<RefundView> {
  const ended = await transition(trx, refund, status, now, { failure_reason, awaiting_buyer_since: null });
  if (ended.sell_order_id === null) await moveRefundHold(deps.ledger, trx, ended, 'release');
  return emitRefundEvents(trx, now, deps.public_base_url, ended, 'moved');
}

/** The money reached the buyer: `succeeded`, the payment's `amount_refunded` (and `payment.refunded` when whole). */
export async function succeedRefund(
  deps: Pick<RefundsDeps, 'public_base_url'>,
  trx: Trx,
  refund: RefundRow,
  now: Date,
): Promise<RefundView> {
  const succeeded = await transition(trx, refund, 'succeeded', now, {
    failure_reason: null,
    awaiting_buyer_since: null,
  });
  const view = await emitRefundEvents(trx, now, deps.public_base_url, succeeded, 'moved');
  await recordRefundSucceeded(deps, trx, refund.payment_id, Number(refund.amount_minor), now);
  return view;
}

/**
 * POST /v1/refunds/{id}/cancel: only before the money moved (`requires_action`, or `pending` with no slip standing; a
 * pay_balance refund's sell order with no fill yet, which is canceled with it and gives its reserve back to available).
 * The sell order is locked before the refund, in the order every path that ends it takes, so a fill racing the cancel
 * either lands first (409 REFUND_BAD_STATE) or finds the order failed.
 */
export async function cancelRefund(deps: RefundsDeps, scope: MerchantScope, id: string): Promise<RefundView> {
  for (;;) {
    const view = await deps.db.transaction().execute(async (trx) => {
      const now = deps.clock.now();
      const seen = await findOwnedRefund(trx, scope, id);
      const order = seen.sell_order_id === null ? null : await lockRefundPayout(trx, seen.sell_order_id);
      const refund = await lockOwnedRefund(trx, scope, id);
      // The destination arrived between the read and the lock (its sell order made under the refund's lock): start
      // again, so the new order is locked before the refund like everywhere else. It happens once at most.
      if (refund.sell_order_id !== seen.sell_order_id) return null;
      if (!CANCELLABLE.includes(refund.status)) throw refundNotCancellable(refund.status);
      if (refund.awaiting_buyer_since !== null) throw refundSlipWaitsForBuyer();
      if (order && (order.status !== 'pending' || order.filled_micro_pay > 0)) throw refundPayoutUnderway(order.status);
      const ended = await endRefund(deps, trx, refund, now, 'canceled', null);
      if (order) await inRefundTerms(() => cancelRefundPayout(payoutDeps(deps).sell_orders, trx, order, now));
      return ended;
    });
    if (view) return view;
  }
}
