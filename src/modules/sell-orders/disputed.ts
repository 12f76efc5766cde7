import type { Trx } from '../../db/database.ts';
import type { Ledger } from '../ledger/port.ts';
import { completeConfirmedCashLeg, failCashLeg } from './cash-leg.ts';
import { lockSellOrder } from './state.ts';
import type { SellOrderRow } from './tables.ts';
import { present } from '../../lib/assert.ts';

/**
 * What disputes do to a sell order (disputes sit above sell orders): an open dispute holds its cash leg, so the sweeper
 * does not fail it while the parties are heard; a resolution on an order still in flight completes or fails it exactly
 * as the cash leg itself would have.
 */

/** The order, locked for the resolving transaction. */
export async function lockSellOrderForDispute(trx: Trx, id: string): Promise<SellOrderRow> {
  return present(await lockSellOrder(trx, id), `disputed sell order ${id} exists (foreign key)`);
}

/** A dispute opened on the order: hold its cash leg (the sweeper leaves a held order alone). */
export async function holdCashLeg(trx: Trx, sell_order_id: string, dispute_id: string): Promise<void> {
  await trx
    .updateTable('sell_orders')
    .set({ held_by_dispute_id: dispute_id })
    .where('id', '=', sell_order_id)
    .execute();
}

/** The dispute is resolved: the hold is lifted (an order past its retries is then failed by the next sweep). */
export async function liftCashLegHold(trx: Trx, sell_order_id: string, dispute_id: string): Promise<void> {
  await trx
    .updateTable('sell_orders')
    .set({ held_by_dispute_id: null })
    .where('id', '=', sell_order_id)
    .where('held_by_dispute_id', '=', dispute_id)
    .execute();
}

/**
 * `favor_counterparty` on an order in flight: the disputed fills' transfers count as confirmed (all of them when
 * `buy_order_ids` is null), and once every fill is, the order completes as a confirmed cash leg: its reserve is burned
 * (key = the sell order id) and `sell_order.completed` fires. Answers the order as it now is.
 */
export async function completeDisputedCashLeg(
  ledger: Ledger,
  trx: Trx,
  order: SellOrderRow,
  buy_order_ids: ReadonlySet<string> | null,
  now: Date,
): Promise<SellOrderRow> {
  return completeConfirmedCashLeg(
    ledger,
    trx,
    order,
    buy_order_ids,
    now,
    `sell order ${order.id} cash leg confirmed by a dispute's resolution`,
  );
}

/**
 * `favor_merchant` on an order in flight: it fails as a failed cash leg (`cash_leg_disputed`): the unpaid fills are
 * taken back from their buyers and the reserve goes back to the seller, as when its retries run out. No
 * cash_leg_failure dispute is opened beside it: this dispute is the record.
 */
export async function failDisputedCashLeg(
  ledger: Ledger,
  trx: Trx,
  order: SellOrderRow,
  now: Date,
): Promise<SellOrderRow> {
  return failCashLeg({ ledger }, trx, order, now, 'cash_leg_disputed');
}
