import type { Executor, Trx } from '../../db/database.ts';
import { defineStateMachine, mover } from '../../db/state-machine.ts';
import { OWNERSHIP, owned } from '../../http/ownership.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { present } from '../../lib/assert.ts';
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

/** The caller's sell order (404 for another merchant's, as on every read). */
export async function findOwnedSellOrder(executor: Executor, scope: MerchantScope, id: string): Promise<SellOrderRow> {
  return owned(await findSellOrder(executor, id), scope, OWNERSHIP.sell_order);
}

/** The caller's sell order, locked for the rest of the transaction; ownership is checked before the lock is taken. */
export async function lockOwnedSellOrder(trx: Trx, scope: MerchantScope, id: string): Promise<SellOrderRow> {
  await findOwnedSellOrder(trx, scope, id);
  return present(await lockSellOrder(trx, id), `sell order ${id} exists after findOwned (rows are never deleted)`);
}

/**
 * In flight, not held by an open dispute, and out of retries: a fill not yet confirmed paid has had
 * `cash_leg_retry_max` slips refused, or the order has been in flight longer than the retry timeout (docs/payouts.md).
 */
export function cashLegExhausted(
  order: SellOrderRow,
  now: Date,
  limits: { cash_leg_retry_max: number; cash_leg_retry_timeout_hours: number },
): boolean {
  // An open dispute holds the cash leg: its resolution decides it, not the retry budget or the clock.
  if (order.status !== 'cash_leg_in_flight' || order.held_by_dispute_id !== null) return false;
  if (order.cash_leg_retries_used >= limits.cash_leg_retry_max) return true;
  const since = order.cash_leg_requested_at ?? order.matched_at ?? order.created_at;
  return now.getTime() - since.getTime() >= limits.cash_leg_retry_timeout_hours * 3600_000;
}
