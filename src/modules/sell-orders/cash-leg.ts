import { sql } from 'kysely';
import type { Trx } from '../../db/database.ts';
import { confirmFills, reverseFillsOfSellOrder } from '../buy-orders/ledger.ts';
import { fillsOfSellOrders } from '../buy-orders/service.ts';
import type { Ledger } from '../ledger/port.ts';
import { expectedTransfers, paidFills } from './expected.ts';
import { inSellOrderTerms, moveSellOrderPay, reservedMicroPay } from './ledger.ts';
import { emitSellOrderEvent } from './present.ts';
import type { SellOrdersDeps } from './service.ts';
import { transition } from './state.ts';
import type { SellOrderFailureReason, SellOrderRow } from './tables.ts';

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
      await emitSellOrderEvent(trx, now, in_flight, 'sell_order.cash_leg_requested', {
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
 * A cash leg given up: the seller's reserve goes back to it and the PAY its fills minted to the buyers is taken back
 * (burned to the mint source; what a buyer already spent becomes its deficit), so the supply is what it was before
 * the match. The reversal rides in `sell_order.failed` and in the auto-opened dispute.
 */
export async function failCashLeg(
  deps: Pick<SellOrdersDeps, 'ledger' | 'onCashLegFailure' | 'onRefundPayoutEnded'>,
  trx: Trx,
  order: SellOrderRow,
  now: Date,
  failure_reason: Extract<
    SellOrderFailureReason,
    'cash_leg_retry_exhausted' | 'cash_leg_disputed'
  > = 'cash_leg_retry_exhausted',
): Promise<SellOrderRow> {
  // One failure at a time: each moves PAY of a seller and of its buyers, and two failures whose seller and buyer are
  // swapped would otherwise lock the same two merchants' accounts in opposite orders.
  await sql`select pg_advisory_xact_lock(hashtextextended('mpay:cash-leg-failure', 0))`.execute(trx);
  const failed = await transition(trx, order, 'failed', now, { failure_reason, held_by_dispute_id: null });
  // Fills the seller confirmed paid stay with their buyers, and that part of the reserve is burned as at completion;
  // the rest of the reserve goes back to the seller and the unpaid fills are taken back.
  const paid = (await paidFills(trx, [failed.id])).get(failed.id) ?? { buy_order_ids: new Set(), paid_micro_pay: 0 };
  const released_micro_pay = reservedMicroPay(failed) - paid.paid_micro_pay;
  if (released_micro_pay > 0)
    await moveSellOrderPay(deps.ledger, trx, failed, 'release', released_micro_pay, `sell order ${failed.id} released`);
  if (paid.paid_micro_pay > 0)
    await moveSellOrderPay(
      deps.ledger,
      trx,
      failed,
      'burnPaid',
      paid.paid_micro_pay,
      `sell order ${failed.id} failed: the fills its seller confirmed paid`,
    );
  const reversals = await inSellOrderTerms(() =>
    reverseFillsOfSellOrder(trx, deps.ledger, failed, now, paid.buy_order_ids),
  );
  await emitSellOrderEvent(trx, now, failed, 'sell_order.failed', { reversal: { fills: reversals } });
  await deps.onCashLegFailure?.(trx, failed, now, reversals);
  await refundPayoutEnded(deps, trx, failed, now);
  return failed;
}

/** An order that pays a refund out has ended (completed or failed): the refund follows it, in the same transaction. */
export async function refundPayoutEnded(
  deps: Pick<SellOrdersDeps, 'onRefundPayoutEnded'>,
  trx: Trx,
  order: SellOrderRow,
  at: Date,
): Promise<void> {
  if (order.refund_id !== null) await deps.onRefundPayoutEnded?.(trx, order, at);
}

/**
 * A cash leg confirmed other than by the seller's own slip (a dispute resolved for the buyers, or the payee of a
 * refund's payout): the named fills' transfers count as confirmed (all of them when `buy_order_ids` is null), and
 * once every fill is, the order completes: its reserve is burned (key = the sell order id) and `sell_order.completed`
 * fires. Answers the order as it now is.
 */
export async function completeConfirmedCashLeg(
  ledger: Ledger,
  trx: Trx,
  order: SellOrderRow,
  buy_order_ids: ReadonlySet<string> | null,
  now: Date,
  memo: string,
): Promise<SellOrderRow> {
  const fills = await fillsOfSellOrders(trx, [order.id]);
  for (const fill of fills)
    if (buy_order_ids === null || buy_order_ids.has(fill.buy_order_id))
      await confirmFills(trx, order.id, fill.buy_order_id, now);
  const confirmed = await fillsOfSellOrders(trx, [order.id]);
  if (!confirmed.every((fill) => fill.confirmed_at !== null)) return order;
  const completed = await transition(trx, order, 'completed', now, { held_by_dispute_id: null });
  await moveSellOrderPay(ledger, trx, completed, 'burn', completed.filled_micro_pay, memo);
  await emitSellOrderEvent(trx, now, completed, 'sell_order.completed');
  return completed;
}
