import { randomUUID } from 'node:crypto';
import { sql, type SqlBool } from 'kysely';
import type { Db, Executor, Trx } from '../../db/database.ts';
import { OWNERSHIP, owned } from '../../http/ownership.ts';
import { listPage } from '../../http/pagination.ts';
import type { MerchantScope } from '../../http/principal.ts';
import type { Clock } from '../../lib/clock.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import { AppError, type ErrorCode } from '../../lib/errors.ts';
import type { Currency } from '../../lib/money.ts';
import { reverseFillsOfSellOrder, type FillReversal } from '../buy-orders/service.ts';
import { recordEvent } from '../events/outbox.ts';
import { accounts, type Ledger } from '../ledger/port.ts';
import type { BankDirectory } from '../reference/banks.ts';
import type { PayoutDestinationInput } from '../reference/payout-destinations.ts';
import { resolvePayoutDestination } from './destinations.ts';
import { everyFillVerified, expectedCashLeg, expectedTransfers, paidFills } from './expected.ts';
import type { ExpectedTransfer } from '../ledger/reconcile.ts';
import type { ReceiptValidator, ValidatorVerdict } from '../validators/port.ts';
import { CASH_LEG_CODES, decodeReceipt } from '../validators/receipt.ts';
import { judgeSlip } from '../validators/slips.ts';
import { presentSellOrder, type SellOrderView } from './present.ts';
import { cashLegExhausted, findSellOrder, lockSellOrder, transition } from './state.ts';
import type { SellOrderRow, SellOrderStatus } from './tables.ts';
import { present } from '../../lib/assert.ts';
import {
  availableBelowAmount,
  batchChangedConcurrently,
  cashLegNotInFlight,
  changedWhileEvidenceChecked,
  sellOrderLedgerUnavailable,
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
}

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

/** Keys of the ledger moves a sell order makes; the completion burn's key is the sell order id (contract 3.2). */
export const sellOrderLedgerKeys = {
  reserve: (id: string) => `sell_order:${id}:reserve`,
  release: (id: string) => `sell_order:${id}:release`,
  /** The unfilled rest of a partially filled order, returned when it closes (expiry or cancel). */
  releaseUnfilled: (id: string) => `sell_order:${id}:release-unfilled`,
  burn: (id: string) => id,
  /** A failed order's fills that the seller had confirmed paid: that part of its reserve is burned, not released. */
  burnPaid: (id: string) => `sell_order:${id}:burn-paid`,
};

/** Ledger refusals in the words of the sell-order contract; anything else passes through unchanged. */
export function mapLedgerError(error: unknown, insufficient: ErrorCode = 'SELL_ORDER_INSUFFICIENT_BALANCE'): never {
  if (error instanceof AppError) {
    if (error.code === 'LEDGER_UNAVAILABLE') throw sellOrderLedgerUnavailable(error.details);
    if (error.code === 'LEDGER_INSUFFICIENT_FUNDS') throw availableBelowAmount(insufficient, error.details);
  }
  throw error;
}

/**
 * The sell order id is derived from the merchant's Idempotency-Key, so the ledger reserve (keyed by the id) of a
 * request whose commit failed after an HTTP ledger already applied it is replayed by the retry, never doubled.
 */
function idFromIdempotencyKey(scope: MerchantScope, key: string | undefined): string {
  if (!key) return randomUUID();
  const hex = sha256Hex(`sell_order|${scope.merchant_id}|${scope.is_sandbox}|${key.toLowerCase()}`);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

async function findOwned(executor: Executor, scope: MerchantScope, id: string): Promise<SellOrderRow> {
  return owned(await findSellOrder(executor, id), scope, OWNERSHIP.sell_order);
}

async function emit(
  trx: Trx,
  at: Date,
  order: SellOrderRow,
  type: string,
  extra: Record<string, unknown> = {},
): Promise<SellOrderView> {
  const view = presentSellOrder(order);
  await recordEvent(trx, at, {
    merchant_id: order.merchant_id,
    is_sandbox: order.is_sandbox,
    type,
    resource_type: 'sell_order',
    resource_id: order.id,
    data: { ...view, ...extra },
  });
  return view;
}

/**
 * PAY of the order still in its reserve: all of it while nothing is filled; once it is matched, the filled part (the
 * unfilled rest of a partially filled order went back when it closed).
 */
export function reservedMicroPay(order: Pick<SellOrderRow, 'amount_micro_pay' | 'filled_micro_pay'>): number {
  return order.filled_micro_pay > 0 ? order.filled_micro_pay : order.amount_micro_pay;
}

/** Reserve back to available: every failure path releases, keyed once per order. */
async function releaseReserve(deps: SellOrdersDeps, trx: Trx, order: SellOrderRow): Promise<void> {
  await reserveToAvailable(
    deps,
    trx,
    order,
    sellOrderLedgerKeys.release(order.id),
    reservedMicroPay(order),
    `sell order ${order.id} released`,
  );
}

async function reserveToAvailable(
  deps: SellOrdersDeps,
  trx: Trx,
  order: SellOrderRow,
  key: string,
  amount_micro_pay: number,
  memo: string,
): Promise<void> {
  try {
    await deps.ledger.transfer(
      {
        key,
        kind: 'transfer',
        debit_account: accounts.merchantReserve(order.merchant_id, order.is_sandbox),
        credit_account: accounts.merchantAvailable(order.merchant_id, order.is_sandbox),
        amount_micro_pay,
        memo,
      },
      { trx },
    );
  } catch (error) {
    mapLedgerError(error);
  }
}

/** Creates a pending sell order and moves its PAY from available to reserve in the same transaction. */
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
  const order = await trx
    .insertInto('sell_orders')
    .values({
      id,
      merchant_id: scope.merchant_id,
      is_sandbox: scope.is_sandbox,
      status: 'pending',
      amount_micro_pay: input.amount_micro_pay,
      currency: 'PAY',
      target_currency: input.target_currency,
      target_fiat_amount: input.target_fiat_amount,
      filled_micro_pay: 0,
      filled_fiat_amount: 0,
      expires_at: new Date(now.getTime() + deps.pending_ttl_hours * 3600_000),
      payout_destination: JSON.stringify(payout_destination),
      matched_buy_order_id: null,
      mint_source_account: null,
      cash_leg_attempts: 0,
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
  try {
    // Last in the transaction: with the HTTP ledger a refusal or outage rolls the row back and nothing is kept.
    await deps.ledger.transfer(
      {
        key: sellOrderLedgerKeys.reserve(order.id),
        kind: 'transfer',
        debit_account: accounts.merchantAvailable(scope.merchant_id, scope.is_sandbox),
        credit_account: accounts.merchantReserve(scope.merchant_id, scope.is_sandbox),
        amount_micro_pay: input.amount_micro_pay,
        memo: `sell order ${order.id} reserved`,
      },
      { trx },
    );
  } catch (error) {
    mapLedgerError(error);
  }
  return presentSellOrder(order);
}

export async function getSellOrder(
  deps: Pick<SellOrdersDeps, 'db'>,
  scope: MerchantScope,
  id: string,
): Promise<SellOrderView> {
  return presentSellOrder(await findOwned(deps.db, scope, id));
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
 * A partially filled order that closes (expiry or cancel): the unfilled rest goes back to available and the order
 * becomes `matched` for its filled part, whose buyers were already minted their PAY: the cash leg is owed for it.
 */
async function closePartiallyFilled(
  deps: SellOrdersDeps,
  trx: Trx,
  order: SellOrderRow,
  now: Date,
): Promise<SellOrderRow> {
  const matched = await transition(trx, order, 'matched', now);
  const unfilled_micro_pay = order.amount_micro_pay - order.filled_micro_pay;
  await reserveToAvailable(
    deps,
    trx,
    order,
    sellOrderLedgerKeys.releaseUnfilled(order.id),
    unfilled_micro_pay,
    `sell order ${order.id} closed partially filled: unfilled rest released`,
  );
  return matched;
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
  const now = deps.clock.now();
  await findOwned(trx, scope, id);
  const order = present(
    await lockSellOrder(trx, id),
    `sell order ${id} exists after findOwned (rows are never deleted)`,
  );
  if (order.status !== 'pending') throw sellOrderNotCancellable(order.status);
  if (order.filled_micro_pay > 0) return presentSellOrder(await closePartiallyFilled(deps, trx, order, now));
  const failed = await transition(trx, order, 'failed', now, { failure_reason: 'cancelled_by_merchant' });
  await releaseReserve(deps, trx, failed);
  return emit(trx, now, failed, 'sell_order.failed');
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
  const order = await findOwned(deps.db, scope, id);
  if (order.status !== 'cash_leg_in_flight' || cashLegExhausted(order, deps.clock.now(), limits(deps)))
    return { image, verdict: null, buy_order_id: null };
  // The buyer's transfer into this seller's own destination, of the fill's amount. judgeSlip records a validator
  // that crashed as unverified, as a payment proof's would be.
  const expected = await expectedCashLeg(deps.db, order, input.buy_order_id);
  const { verdict } = await judgeSlip(deps, {
    owner: expected.slip_owner,
    image,
    content_type: input.content_type,
    expect: expected.check,
  });
  return { image, verdict, buy_order_id: expected.buy_order_id };
}

const limits = (deps: SellOrdersDeps) => ({
  retry_max: deps.cash_leg_retry_max,
  timeout_hours: deps.cash_leg_retry_timeout_hours,
});

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
  await findOwned(trx, scope, id);
  let order = present(await lockSellOrder(trx, id), `sell order ${id} exists after findOwned (rows are never deleted)`);
  if (cashLegExhausted(order, now, limits(deps))) order = await failExhausted(deps, trx, order, now);
  if (order.status === 'failed' && order.failure_reason === 'cash_leg_retry_exhausted') return presentSellOrder(order);
  if (order.status !== 'cash_leg_in_flight') throw cashLegNotInFlight(order.status);
  const verdict = evidence.verdict;
  if (!verdict) throw changedWhileEvidenceChecked();

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
    last_cash_leg_attempt_at: now,
    last_cash_leg_outcome: verdict.outcome,
  };
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
  try {
    await deps.ledger.transfer(
      {
        key: sellOrderLedgerKeys.burn(order.id),
        kind: 'burn',
        debit_account: accounts.merchantReserve(order.merchant_id, order.is_sandbox),
        // Back to the issuance account the buyer's PAY was minted from, so a completed pair nets to zero there.
        credit_account: order.mint_source_account ?? accounts.world(order.is_sandbox),
        amount_micro_pay: order.filled_micro_pay,
        memo: `sell order ${order.id} cash leg confirmed`,
      },
      { trx },
    );
  } catch (error) {
    mapLedgerError(error);
  }
  return emit(trx, now, completed, 'sell_order.completed');
}

/**
 * A cash leg given up: the seller's reserve goes back to it and the PAY its fills minted to the buyers is taken back
 * (burned to the mint source; what a buyer already spent becomes its deficit), so the supply is what it was before
 * the match. The reversal rides in `sell_order.failed` and in the auto-opened dispute.
 */
async function failExhausted(deps: SellOrdersDeps, trx: Trx, order: SellOrderRow, now: Date): Promise<SellOrderRow> {
  // One failure at a time: each moves PAY of a seller and of its buyers, and two failures whose seller and buyer are
  // swapped would otherwise lock the same two merchants' accounts in opposite orders.
  await sql`select pg_advisory_xact_lock(hashtextextended('mpay:cash-leg-failure', 0))`.execute(trx);
  const failed = await transition(trx, order, 'failed', now, { failure_reason: 'cash_leg_retry_exhausted' });
  // Fills the seller confirmed paid stay with their buyers, and that part of the reserve is burned as at completion;
  // the rest of the reserve goes back to the seller and the unpaid fills are taken back.
  const paid = (await paidFills(trx, [failed.id])).get(failed.id) ?? { buy_order_ids: new Set(), paid_micro_pay: 0 };
  const released_micro_pay = reservedMicroPay(failed) - paid.paid_micro_pay;
  if (released_micro_pay > 0)
    await reserveToAvailable(
      deps,
      trx,
      failed,
      sellOrderLedgerKeys.release(failed.id),
      released_micro_pay,
      `sell order ${failed.id} released`,
    );
  let reversals: FillReversal[];
  try {
    if (paid.paid_micro_pay > 0)
      await deps.ledger.transfer(
        {
          key: sellOrderLedgerKeys.burnPaid(failed.id),
          kind: 'burn',
          debit_account: accounts.merchantReserve(failed.merchant_id, failed.is_sandbox),
          credit_account: failed.mint_source_account ?? accounts.world(failed.is_sandbox),
          amount_micro_pay: paid.paid_micro_pay,
          memo: `sell order ${failed.id} failed: the fills its seller confirmed paid`,
        },
        { trx },
      );
    reversals = await reverseFillsOfSellOrder(trx, deps.ledger, failed, now, paid.buy_order_ids);
  } catch (error) {
    mapLedgerError(error);
  }
  await emit(trx, now, failed, 'sell_order.failed', { reversal: { fills: reversals } });
  await deps.onCashLegFailure?.(trx, failed, now, reversals);
  return failed;
}

/**
 * The sweeper: pending orders past `expires_at` fail with `expired_unmatched`; in-flight orders out of retries fail
 * with `cash_leg_retry_exhausted`. Each order is its own transaction, claimed with SKIP LOCKED so several workers
 * share the work, and re-checked under the lock. Returns how many orders it failed.
 */
export async function sweepSellOrders(deps: SellOrdersDeps, batch = 100): Promise<number> {
  const now = deps.clock.now();
  const timeout_cutoff = new Date(now.getTime() - deps.cash_leg_retry_timeout_hours * 3600_000);
  const due = await deps.db
    .selectFrom('sell_orders')
    .select('id')
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'pending'), eb('expires_at', '<=', now)]),
        eb.and([
          eb('status', '=', 'cash_leg_in_flight'),
          eb.or([
            eb('cash_leg_attempts', '>=', deps.cash_leg_retry_max),
            eb('cash_leg_requested_at', '<=', timeout_cutoff),
          ]),
        ]),
      ]),
    )
    .orderBy('created_at')
    .limit(batch)
    .execute();
  let done = 0;
  for (const { id } of due) {
    const swept = await deps.db.transaction().execute(async (trx) => {
      const order = await trx
        .selectFrom('sell_orders')
        .selectAll()
        .where('id', '=', id)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!order) return false;
      if (order.status === 'pending' && order.expires_at.getTime() <= now.getTime() && order.filled_micro_pay > 0) {
        await closePartiallyFilled(deps, trx, order, now);
        return true;
      }
      if (order.status === 'pending' && order.expires_at.getTime() <= now.getTime()) {
        const failed = await transition(trx, order, 'failed', now, { failure_reason: 'expired_unmatched' });
        await releaseReserve(deps, trx, failed);
        await emit(trx, now, failed, 'sell_order.failed');
        return true;
      }
      if (cashLegExhausted(order, now, limits(deps))) {
        await failExhausted(deps, trx, order, now);
        return true;
      }
      return false;
    });
    if (swept) done += 1;
  }
  return done;
}

/**
 * The cash-leg request: matched orders move to `cash_leg_in_flight` and the seller gets `sell_order.cash_leg_requested`
 * with what to expect: each buyer's transfer (amount, reference, buyer) into its payout destination, which it then
 * confirms with the slip.
 */
export async function requestCashLegs(deps: Pick<SellOrdersDeps, 'db' | 'clock'>, batch = 200): Promise<number> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const matched = await trx
      .selectFrom('sell_orders')
      .selectAll()
      .where('status', '=', 'matched')
      .orderBy('matched_at')
      .limit(batch)
      .forUpdate()
      .skipLocked()
      .execute();
    const transfers = await expectedTransfers(trx, matched);
    for (const order of matched) {
      const in_flight = await transition(trx, order, 'cash_leg_in_flight', now);
      await emit(trx, now, in_flight, 'sell_order.cash_leg_requested', {
        cash_leg: {
          direction: 'buyers_pay_you',
          buy_order_id: in_flight.matched_buy_order_id,
          fiat_currency: in_flight.target_currency,
          // The filled part at this order's price: target_fiat_amount when it filled in full.
          fiat_amount: in_flight.filled_fiat_amount,
          amount_micro_pay: in_flight.filled_micro_pay,
          to: in_flight.payout_destination,
          fills: transfers.get(order.id) ?? [],
        },
      });
    }
    return matched.length;
  });
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

/**
 * For the balance view: PAY credited back to the merchant's available account since `since` by sell-order reserve
 * releases (cancel, expiry, exhausted cash legs, the unfilled rest of a partly filled order). Those credits return the
 * merchant's own PAY, so they are no volume: the trailing 30-day volume leaves them out.
 */
export async function releasedReserveMicroPaySince(
  executor: Executor,
  merchant_id: string,
  is_sandbox: boolean,
  since: Date,
): Promise<number> {
  const result = await sql<{ released: string }>`
    select (
      coalesce(sum(case when filled_micro_pay > 0 then filled_micro_pay else amount_micro_pay end) filter (where status = 'failed' and failed_at >= ${since}), 0)
      + coalesce(sum(amount_micro_pay - filled_micro_pay) filter (where status <> 'pending' and filled_micro_pay > 0 and filled_micro_pay < amount_micro_pay and matched_at >= ${since}), 0)
    )::text as released
    from sell_orders where merchant_id = ${merchant_id} and is_sandbox = ${is_sandbox}`.execute(executor);
  return Number(result.rows[0]?.released ?? 0);
}

/** For disputes: a sell order by id, whatever its owner (the caller decides what the owner may see). */
export async function sellOrderForDispute(executor: Executor, id: string): Promise<SellOrderRow | undefined> {
  return findSellOrder(executor, id);
}

/** The reserve, release, unfilled-rest release and completion burn each sell order's state implies. */
export async function sellOrderExpectations(executor: Executor): Promise<ExpectedTransfer[]> {
  const orders = await executor.selectFrom('sell_orders').selectAll().execute();
  const failed_ids = orders.filter((order) => order.status === 'failed' && order.filled_micro_pay > 0).map((o) => o.id);
  const paid = await paidFills(executor, failed_ids);
  return orders.flatMap((order) => {
    const available = accounts.merchantAvailable(order.merchant_id, order.is_sandbox);
    const reserve = accounts.merchantReserve(order.merchant_id, order.is_sandbox);
    const rows = [{ table: 'sell_orders', id: order.id }];
    const move = (key: string, amount_micro_pay: number, from: string, to: string): ExpectedTransfer => ({
      key,
      kind: 'transfer',
      debit_account: from,
      credit_account: to,
      amount_micro_pay,
      cause: 'sell_order',
      rows,
    });
    const expected = [move(sellOrderLedgerKeys.reserve(order.id), order.amount_micro_pay, available, reserve)];
    const paid_micro_pay = order.status === 'failed' ? (paid.get(order.id)?.paid_micro_pay ?? 0) : 0;
    if (order.status === 'failed' && reservedMicroPay(order) > paid_micro_pay)
      expected.push(
        move(sellOrderLedgerKeys.release(order.id), reservedMicroPay(order) - paid_micro_pay, reserve, available),
      );
    if (paid_micro_pay > 0)
      expected.push({
        key: sellOrderLedgerKeys.burnPaid(order.id),
        kind: 'burn',
        debit_account: reserve,
        credit_account: order.mint_source_account ?? accounts.world(order.is_sandbox),
        amount_micro_pay: paid_micro_pay,
        cause: 'sell_order',
        rows,
      });
    if (order.status !== 'pending' && order.filled_micro_pay > 0 && order.filled_micro_pay < order.amount_micro_pay) {
      expected.push(
        move(
          sellOrderLedgerKeys.releaseUnfilled(order.id),
          order.amount_micro_pay - order.filled_micro_pay,
          reserve,
          available,
        ),
      );
    }
    if (order.status === 'completed') {
      expected.push({
        key: sellOrderLedgerKeys.burn(order.id),
        kind: 'burn',
        debit_account: reserve,
        credit_account: order.mint_source_account ?? accounts.world(order.is_sandbox),
        amount_micro_pay: order.filled_micro_pay,
        cause: 'sell_order',
        rows,
      });
    }
    return expected;
  });
}
