import type { Trx } from '../../db/database.ts';
import { failCashLeg, refundPayoutEnded } from './cash-leg.ts';
import { moveSellOrderPay, releaseReserve } from './ledger.ts';
import { emitSellOrderEvent, presentSellOrder, type SellOrderView } from './present.ts';
import type { SellOrdersDeps } from './service.ts';
import { cashLegExhausted, transition } from './state.ts';
import type { SellOrderFailureReason, SellOrderRow } from './tables.ts';

/**
 * A pending order that closes (merchant cancel or expiry). Nothing filled: it fails with `reason` and its reserve is
 * released. Partly filled: the unfilled rest goes back to available and the order becomes `matched` for its filled
 * part, whose buyers were already minted their PAY: the cash leg is owed for it. An order that pays a refund out owes
 * the buyer the whole refund, so partly filled it stays in the book for another pending period instead.
 */
export async function closePending(
  deps: SellOrdersDeps,
  trx: Trx,
  order: SellOrderRow,
  now: Date,
  reason: Extract<SellOrderFailureReason, 'cancelled_by_merchant' | 'expired_unmatched'>,
): Promise<SellOrderView> {
  if (order.filled_micro_pay > 0 && order.refund_id !== null) {
    const kept = await trx
      .updateTable('sell_orders')
      .set({ expires_at: new Date(now.getTime() + deps.pending_ttl_hours * 3600_000) })
      .where('id', '=', order.id)
      .where('status', '=', 'pending')
      .returningAll()
      .executeTakeFirstOrThrow();
    return presentSellOrder(kept);
  }
  if (order.filled_micro_pay > 0) {
    const matched = await transition(trx, order, 'matched', now);
    await moveSellOrderPay(
      deps.ledger,
      trx,
      order,
      'releaseUnfilled',
      order.amount_micro_pay - order.filled_micro_pay,
      `sell order ${order.id} closed partially filled: unfilled rest released`,
    );
    return presentSellOrder(matched);
  }
  const failed = await transition(trx, order, 'failed', now, { failure_reason: reason });
  await releaseReserve(deps.ledger, trx, failed);
  const view = await emitSellOrderEvent(trx, now, failed, 'sell_order.failed');
  await refundPayoutEnded(deps, trx, failed, now);
  return view;
}

/**
 * The sweeper: pending orders past `expires_at` close (`expired_unmatched`, or `matched` for their filled part);
 * in-flight orders out of retries fail with `cash_leg_retry_exhausted`, unless an open dispute holds them. Each order is its own transaction, claimed
 * with SKIP LOCKED so several workers share the work, and re-checked under the lock. Returns how many orders it closed.
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
          eb('held_by_dispute_id', 'is', null),
          eb.or([
            eb('cash_leg_retries_used', '>=', deps.cash_leg_retry_max),
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
      if (order.status === 'pending' && order.expires_at.getTime() <= now.getTime()) {
        await closePending(deps, trx, order, now, 'expired_unmatched');
        return true;
      }
      if (cashLegExhausted(order, now, deps)) {
        await failCashLeg(deps, trx, order, now);
        return true;
      }
      return false;
    });
    if (swept) done += 1;
  }
  return done;
}
