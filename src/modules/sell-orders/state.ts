import type { Executor, Trx } from '../../db/database.ts';
import { defineStateMachine, mover } from '../../db/state-machine.ts';
import type { SellOrderRow, SellOrderStatus } from './tables.ts';

/** Every allowed move of a sell order, in one place (contract 3.2; a `disputed` status does not exist). */
export const SELL_ORDER_TRANSITIONS: Record<SellOrderStatus, readonly SellOrderStatus[]> = {
  pending: ['matched', 'failed'],
  matched: ['cash_leg_in_flight'],
  cash_leg_in_flight: ['completed', 'failed'],
  completed: [],
  failed: [],
};

export const SELL_ORDER_STATUSES: readonly SellOrderStatus[] = [
  'pending',
  'matched',
  'cash_leg_in_flight',
  'completed',
  'failed',
];

export const SELL_ORDER_STATES = defineStateMachine({
  table: 'sell_orders',
  noun: 'sell order',
  moves: SELL_ORDER_TRANSITIONS,
  entered_at: {
    matched: 'matched_at',
    cash_leg_in_flight: 'cash_leg_requested_at',
    completed: 'completed_at',
    failed: 'failed_at',
  },
  conflict: 'SELL_ORDER_BAD_STATE',
});

/** One move of a sell order (a sweep racing a confirm, a cancel racing the matcher: the loser gets 409 SELL_ORDER_BAD_STATE). */
export const transition = mover(SELL_ORDER_STATES);

export async function lockSellOrder(trx: Trx, id: string): Promise<SellOrderRow | undefined> {
  return trx.selectFrom('sell_orders').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function findSellOrder(executor: Executor, id: string): Promise<SellOrderRow | undefined> {
  return executor.selectFrom('sell_orders').selectAll().where('id', '=', id).executeTakeFirst();
}

/** In flight and out of retries: attempts used up, or in flight longer than the retry timeout (docs/payouts.md). */
export function cashLegExhausted(
  order: SellOrderRow,
  now: Date,
  limits: { retry_max: number; timeout_hours: number },
): boolean {
  if (order.status !== 'cash_leg_in_flight') return false;
  if (order.cash_leg_attempts >= limits.retry_max) return true;
  const since = order.cash_leg_requested_at ?? order.matched_at ?? order.created_at;
  return now.getTime() - since.getTime() >= limits.timeout_hours * 3600_000;
}
