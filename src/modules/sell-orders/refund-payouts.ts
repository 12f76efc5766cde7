import type { Executor, Trx } from '../../db/database.ts';
import { present } from '../../lib/assert.ts';
import type { PayoutDestination } from '../reference/payout-destinations.ts';
import { completeConfirmedCashLeg } from './cash-leg.ts';
import { closePending } from './close.ts';
import { cashLegNotInFlight } from './errors.ts';
import { moveSellOrderPay } from './ledger.ts';
import { idFromIdempotencyKey, insertPendingOrder, type SellOrdersDeps } from './service.ts';
import { lockSellOrder } from './state.ts';
import type { SellOrderRow } from './tables.ts';

/**
 * A refund paid from the merchant's PAY (DESIGN 3c "Refund from PAY") is paid out as a sell order like any other: in
 * the same FIFO book, filled by buy orders whose merchants pay the fiat to the order's payout destination, here the
 * refund's buyer. What differs is where its PAY comes from (the refund hold, in one posting: no PAY is made or
 * destroyed) and who confirms its cash leg (the buyer, who is the payee, or a provider's check of a slip).
 */

/** What the refunds module hands over once a pay_balance refund's destination is known. */
export interface RefundPayout {
  refund_id: string;
  merchant_id: string;
  is_sandbox: boolean;
  /** The refund's hold: the order's amount. */
  hold_micro_pay: number;
  /** The refund in minor units of its payment's currency: what the buyer is paid (the order's asking price). */
  amount_minor: number;
  currency: string;
  destination: PayoutDestination;
}

/**
 * Creates the refund's pending sell order in the caller's transaction and moves the refund hold into its reserve
 * (`sell_order:<id>:reserve`, refund hold -> reserve). The id derives from the refund, so a retried transaction after
 * an HTTP ledger applied the move replays it.
 */
export async function createRefundPayout(
  deps: Pick<SellOrdersDeps, 'ledger' | 'pending_ttl_hours'>,
  trx: Trx,
  refund: RefundPayout,
  now: Date,
): Promise<SellOrderRow> {
  const scope = { merchant_id: refund.merchant_id, is_sandbox: refund.is_sandbox };
  const order = await insertPendingOrder(deps, trx, now, {
    id: idFromIdempotencyKey(scope, `refund:${refund.refund_id}`),
    merchant_id: refund.merchant_id,
    is_sandbox: refund.is_sandbox,
    amount_micro_pay: refund.hold_micro_pay,
    target_currency: refund.currency,
    target_fiat_amount: refund.amount_minor,
    payout_destination: refund.destination,
    refund_id: refund.refund_id,
  });
  await moveSellOrderPay(
    deps.ledger,
    trx,
    order,
    'reserve',
    order.amount_micro_pay,
    `sell order ${order.id} reserved from the hold of refund ${refund.refund_id}`,
  );
  return order;
}

/** A refund's sell order, locked for the caller's transaction (taken before the refund's own row, always). */
export async function lockRefundPayout(trx: Trx, sell_order_id: string): Promise<SellOrderRow> {
  return present(await lockSellOrder(trx, sell_order_id), `refund payout ${sell_order_id} exists (never deleted)`);
}

/** Refund sell orders by id, for the refunds' sweep and claim page. */
export async function findRefundPayouts(executor: Executor, ids: readonly string[]): Promise<SellOrderRow[]> {
  if (ids.length === 0) return [];
  return executor
    .selectFrom('sell_orders')
    .selectAll()
    .where('id', 'in', ids)
    .where('refund_id', 'is not', null)
    .execute();
}

/**
 * The refund is canceled: its locked order, if nothing has filled it yet, fails `cancelled_by_merchant` and its reserve
 * goes back to available (`sell_order:<id>:release`). Answers false when buyers have filled any of it (the money
 * is on its way and the refund can no longer be canceled).
 */
export async function cancelRefundPayout(
  deps: SellOrdersDeps,
  trx: Trx,
  order: SellOrderRow,
  now: Date,
): Promise<boolean> {
  if (order.status !== 'pending' || order.filled_micro_pay > 0) return false;
  await closePending(deps, trx, order, now, 'cancelled_by_merchant');
  return true;
}

/**
 * The refund's buyer says the money arrived (the claim page): the buyer is the payee of every fill, so every fill's
 * transfer counts as confirmed and the locked order completes as a confirmed cash leg (its reserve burned, key = the
 * order id, `sell_order.completed`). Only while the cash leg is in flight.
 */
export async function confirmRefundPayoutByPayee(
  deps: Pick<SellOrdersDeps, 'ledger'>,
  trx: Trx,
  order: SellOrderRow,
  now: Date,
): Promise<SellOrderRow> {
  if (order.status !== 'cash_leg_in_flight') throw cashLegNotInFlight(order.status);
  return completeConfirmedCashLeg(
    deps.ledger,
    trx,
    order,
    null,
    now,
    `sell order ${order.id} cash leg confirmed by the refund's buyer`,
  );
}
