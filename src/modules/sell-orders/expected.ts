import type { Executor, Trx } from '../../db/database.ts';
import { AppError } from '../../lib/errors.ts';
import { fillReference } from '../buy-orders/present.ts';
import { fillsOfSellOrders } from '../buy-orders/service.ts';
import { slipReceiver } from '../reference/payout-destinations.ts';
import type { ReceiptCheck } from '../validators/port.ts';
import { slipOwner } from '../validators/slips.ts';
import type { SellOrderRow } from './tables.ts';

/**
 * What a seller's slip must show: one buyer's transfer for one fill, of that fill's fiat amount, into the seller's own
 * payout destination. A sell order filled by several buy orders is confirmed fill by fill (`buy_order_id` names it;
 * unnamed, the oldest fill still without a verified transfer) and completes when every fill's transfer is verified.
 */
export interface ExpectedCashLeg {
  /** The fill's buy order; null only for an order without fill rows. */
  buy_order_id: string | null;
  check: Omit<ReceiptCheck, 'image' | 'content_type' | 'check_duplicate' | 'reading'>;
  /** Whose slip it is: the order's, or with several fills that fill's (one slip never confirms two transfers). */
  slip_owner: string;
}

const notAFill = () =>
  new AppError('VALIDATION_ERROR', 'buy_order_id is not a buy order that filled this sell order', [
    { field: 'body.buy_order_id', message: 'is not a fill of this sell order' },
  ]);

export async function expectedCashLeg(
  executor: Executor,
  order: SellOrderRow,
  buy_order_id: string | undefined,
): Promise<ExpectedCashLeg> {
  const receiver = order.payout_destination ? { receiver: slipReceiver(order.payout_destination) } : {};
  const fills = await fillsOfSellOrders(executor, [order.id]);
  const whole = slipOwner.cashLeg(order.id);
  if (fills.length === 0)
    return {
      buy_order_id: null,
      check: { expected_amount_minor: order.filled_fiat_amount, currency: order.target_currency, ...receiver },
      slip_owner: whole,
    };
  const fill =
    buy_order_id === undefined
      ? await nextUnverifiedFill(executor, order.id, fills)
      : fills.find((candidate) => candidate.buy_order_id === buy_order_id);
  if (!fill) throw notAFill();
  return {
    buy_order_id: fill.buy_order_id,
    check: { expected_amount_minor: fill.fiat_amount, currency: order.target_currency, ...receiver },
    slip_owner: fills.length === 1 ? whole : `${whole}:fill:${fill.buy_order_id}`,
  };
}

async function nextUnverifiedFill<Fill extends { buy_order_id: string }>(
  executor: Executor,
  sell_order_id: string,
  fills: readonly Fill[],
): Promise<Fill | undefined> {
  if (fills.length === 1) return fills[0];
  const done = new Set((await verifiedFills(executor, sell_order_id)).map((row) => row.buy_order_id));
  return fills.find((fill) => !done.has(fill.buy_order_id)) ?? fills.at(-1);
}

function verifiedFills(executor: Executor, sell_order_id: string) {
  return executor
    .selectFrom('sell_order_cash_leg_attempts')
    .select('buy_order_id')
    .where('sell_order_id', '=', sell_order_id)
    .where('outcome', '=', 'verified')
    .execute();
}

/**
 * Fills whose cash leg is already confirmed (the seller's verified slip for that buyer, or a dispute resolved for the
 * buyer), on an order with several fills (one fill completes the order when confirmed). A failed cash leg keeps those:
 * the buyer paid, so its PAY stays and the seller's is burned.
 */
export async function paidFills(
  executor: Executor,
  sell_order_ids: readonly string[],
): Promise<Map<string, { buy_order_ids: Set<string>; paid_micro_pay: number }>> {
  const paid = new Map<string, { buy_order_ids: Set<string>; paid_micro_pay: number }>();
  if (sell_order_ids.length === 0) return paid;
  const fills = Map.groupBy(await fillsOfSellOrders(executor, sell_order_ids), (fill) => fill.sell_order_id);
  for (const [sell_order_id, of_order] of fills) {
    if (of_order.length <= 1) continue;
    const kept = of_order.filter((fill) => fill.confirmed_at !== null);
    paid.set(sell_order_id, {
      buy_order_ids: new Set(kept.map((fill) => fill.buy_order_id)),
      paid_micro_pay: kept.reduce((sum, fill) => sum + fill.amount_micro_pay, 0),
    });
  }
  return paid;
}

/** The most refused slips of any one fill not yet confirmed paid (the whole order's when it has no fills). */
export async function retriesUsed(executor: Executor, sell_order_id: string): Promise<number> {
  const attempts = await executor
    .selectFrom('sell_order_cash_leg_attempts')
    .select(['buy_order_id', 'outcome'])
    .where('sell_order_id', '=', sell_order_id)
    .execute();
  const paid = new Set(attempts.filter((row) => row.outcome === 'verified').map((row) => row.buy_order_id));
  const refused = new Map<string | null, number>();
  for (const { buy_order_id, outcome } of attempts) {
    if (outcome !== 'verified' && !paid.has(buy_order_id))
      refused.set(buy_order_id, (refused.get(buy_order_id) ?? 0) + 1);
  }
  return Math.max(0, ...refused.values());
}

/** After a verified slip for `buy_order_id`: has every fill of the order now a verified transfer? */
export async function everyFillVerified(trx: Trx, order: SellOrderRow, buy_order_id: string | null): Promise<boolean> {
  const fills = await fillsOfSellOrders(trx, [order.id]);
  if (fills.length <= 1) return true;
  const done = new Set([...(await verifiedFills(trx, order.id)).map((row) => row.buy_order_id), buy_order_id]);
  return fills.every((fill) => done.has(fill.buy_order_id));
}

/** What the seller is told to expect when its cash leg is requested: each buyer's transfer into its destination. */
export async function expectedTransfers(executor: Executor, orders: readonly SellOrderRow[]) {
  const fills = Map.groupBy(
    await fillsOfSellOrders(
      executor,
      orders.map((order) => order.id),
    ),
    (fill) => fill.sell_order_id,
  );
  return new Map(
    orders.map((order) => [
      order.id,
      (fills.get(order.id) ?? []).map((fill) => ({
        buy_order_id: fill.buy_order_id,
        payer_name: fill.payer_name,
        reference: fillReference(fill.id),
        amount_micro_pay: fill.amount_micro_pay,
        fiat_amount: fill.fiat_amount,
      })),
    ]),
  );
}
