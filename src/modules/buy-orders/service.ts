import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, Executor, Trx } from '../../db/database.ts';
import { afterCursor, decodeCursor, toPage } from '../../http/pagination.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { iso } from '../../http/schemas.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import type { Currency } from '../../lib/money.ts';
import { recordEvent } from '../events/outbox.ts';
import type { BuyOrderRow, BuyOrderStatus } from './tables.ts';

export interface BuyOrdersDeps {
  db: Db;
  clock: Clock;
  pending_ttl_hours: number;
}

export const BUY_ORDER_STATUSES: readonly BuyOrderStatus[] = ['pending', 'matched', 'cancelled', 'expired'];

/** Every allowed move of a buy order. There is no cash-leg step on the buy side: `matched` is final. */
export const BUY_ORDER_TRANSITIONS: Record<BuyOrderStatus, readonly BuyOrderStatus[]> = {
  pending: ['matched', 'cancelled', 'expired'],
  matched: [],
  cancelled: [],
  expired: [],
};

const TIMESTAMP_OF: Partial<Record<BuyOrderStatus, keyof BuyOrderRow>> = { matched: 'matched_at', cancelled: 'cancelled_at', expired: 'expired_at' };

export interface BuyOrderView {
  id: string;
  merchant_id: string;
  is_sandbox: boolean;
  status: BuyOrderStatus;
  amount_micro_pay: number;
  fiat_currency: string;
  fiat_amount: number;
  expires_at: string;
  matched_sell_order_id: string | null;
  mint_transfer_id: string | null;
  created_at: string;
  matched_at: string | null;
  cancelled_at: string | null;
  expired_at: string | null;
}

export function presentBuyOrder(row: BuyOrderRow): BuyOrderView {
  return {
    id: row.id,
    merchant_id: row.merchant_id,
    is_sandbox: row.is_sandbox,
    status: row.status,
    amount_micro_pay: row.amount_micro_pay,
    fiat_currency: row.fiat_currency,
    fiat_amount: row.fiat_amount,
    expires_at: iso(row.expires_at),
    matched_sell_order_id: row.matched_sell_order_id,
    mint_transfer_id: row.mint_transfer_id,
    created_at: iso(row.created_at),
    matched_at: iso(row.matched_at),
    cancelled_at: iso(row.cancelled_at),
    expired_at: iso(row.expired_at),
  };
}

/** `UPDATE ... WHERE status = <from>`: a cancel racing the matcher loses cleanly with 409 BUY_ORDER_BAD_STATE. */
export async function transitionBuyOrder(
  trx: Trx,
  order: Pick<BuyOrderRow, 'id' | 'status'>,
  to: BuyOrderStatus,
  at: Date,
  patch: Partial<Pick<BuyOrderRow, 'matched_sell_order_id' | 'mint_transfer_id'>> = {},
): Promise<BuyOrderRow> {
  if (!BUY_ORDER_TRANSITIONS[order.status].includes(to)) throw new AppError('BUY_ORDER_BAD_STATE', `A ${order.status} buy order cannot become ${to}`);
  const stamp = TIMESTAMP_OF[to];
  const updated = await trx
    .updateTable('buy_orders')
    .set({ status: to, ...patch, ...(stamp ? { [stamp]: at } : {}) })
    .where('id', '=', order.id)
    .where('status', '=', order.status)
    .returningAll()
    .executeTakeFirst();
  if (!updated) throw new AppError('BUY_ORDER_BAD_STATE', `Buy order ${order.id} changed status concurrently`);
  return updated;
}

export async function emitBuyOrderEvent(trx: Trx, at: Date, order: BuyOrderRow, type: string): Promise<BuyOrderView> {
  const view = presentBuyOrder(order);
  await recordEvent(trx, at, { merchant_id: order.merchant_id, is_sandbox: order.is_sandbox, type, resource_type: 'buy_order', resource_id: order.id, data: { ...view } });
  return view;
}

async function findOwned(executor: Executor, scope: MerchantScope, id: string): Promise<BuyOrderRow> {
  const order = await executor.selectFrom('buy_orders').selectAll().where('id', '=', id).executeTakeFirst();
  if (!order || order.is_sandbox !== scope.is_sandbox) throw notFound('Buy order');
  if (order.merchant_id !== scope.merchant_id) throw new AppError('FORBIDDEN', 'This buy order belongs to another merchant');
  return order;
}

export interface CreateBuyOrderInput {
  amount_micro_pay: number;
  fiat_currency: Currency;
  fiat_amount: number;
}

/** A pending buy order; no PAY moves until the matcher pairs it (the mint then credits the buyer). */
export async function createBuyOrder(deps: BuyOrdersDeps, trx: Trx, scope: MerchantScope, input: CreateBuyOrderInput): Promise<BuyOrderView> {
  const now = deps.clock.now();
  const order = await trx
    .insertInto('buy_orders')
    .values({
      id: randomUUID(),
      merchant_id: scope.merchant_id,
      is_sandbox: scope.is_sandbox,
      status: 'pending',
      amount_micro_pay: input.amount_micro_pay,
      fiat_currency: input.fiat_currency,
      fiat_amount: input.fiat_amount,
      expires_at: new Date(now.getTime() + deps.pending_ttl_hours * 3600_000),
      matched_sell_order_id: null,
      mint_transfer_id: null,
      created_at: now,
      matched_at: null,
      cancelled_at: null,
      expired_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return emitBuyOrderEvent(trx, now, order, 'buy_order.created');
}

export async function getBuyOrder(deps: Pick<BuyOrdersDeps, 'db'>, scope: MerchantScope, id: string): Promise<BuyOrderView> {
  return presentBuyOrder(await findOwned(deps.db, scope, id));
}

export interface ListBuyOrdersQuery {
  status?: BuyOrderStatus[] | undefined;
  fiat_currency?: string | undefined;
  created_after?: string | undefined;
  created_before?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

export async function listBuyOrders(deps: Pick<BuyOrdersDeps, 'db'>, scope: MerchantScope, query: ListBuyOrdersQuery) {
  const position = decodeCursor(query.cursor);
  let select = deps.db.selectFrom('buy_orders').selectAll().where('merchant_id', '=', scope.merchant_id).where('is_sandbox', '=', scope.is_sandbox);
  if (query.status?.length) select = select.where('status', 'in', query.status);
  if (query.fiat_currency) select = select.where('fiat_currency', '=', query.fiat_currency);
  if (query.created_after) select = select.where('created_at', '>=', new Date(query.created_after));
  if (query.created_before) select = select.where('created_at', '<', new Date(query.created_before));
  if (position) select = select.where(afterCursor(position));
  const rows = await select.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit + 1).execute();
  return toPage(rows, query.limit, presentBuyOrder);
}

/** Only a pending buy order can be cancelled; a matched one already received its PAY (409 BUY_ORDER_BAD_STATE). */
export async function cancelBuyOrder(deps: BuyOrdersDeps, trx: Trx, scope: MerchantScope, id: string): Promise<BuyOrderView> {
  const now = deps.clock.now();
  await findOwned(trx, scope, id);
  const order = await trx.selectFrom('buy_orders').selectAll().where('id', '=', id).forUpdate().executeTakeFirstOrThrow();
  if (order.status !== 'pending') throw new AppError('BUY_ORDER_BAD_STATE', `Only a pending buy order can be cancelled; this one is ${order.status}`);
  return emitBuyOrderEvent(trx, now, await transitionBuyOrder(trx, order, 'cancelled', now), 'buy_order.cancelled');
}

/** Pending buy orders past `expires_at` become `expired` (event `buy_order.expired`, additive). */
export async function expireBuyOrders(deps: BuyOrdersDeps, batch = 200): Promise<number> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const due = await trx.selectFrom('buy_orders').selectAll().where('status', '=', 'pending').where('expires_at', '<=', now).limit(batch).forUpdate().skipLocked().execute();
    for (const order of due) await emitBuyOrderEvent(trx, now, await transitionBuyOrder(trx, order, 'expired', now), 'buy_order.expired');
    return due.length;
  });
}

/**
 * For the matcher: for each (fiat currency, amount) asked for, the `count` oldest pending, unexpired buy orders of that
 * pair, oldest first. One query, whatever the number of pairs.
 */
export async function oldestPendingBuys(executor: Executor, is_sandbox: boolean, now: Date, wanted: readonly { fiat_currency: string; amount_micro_pay: number; count: number }[]) {
  if (wanted.length === 0) return [];
  const values = sql.join(wanted.map((w) => sql`(${w.fiat_currency}::text, ${w.amount_micro_pay}::bigint, ${w.count}::int)`));
  // A LATERAL index scan per pair (the partial FIFO index), so the cost follows what is asked, not the size of the book.
  const result = await sql<{ id: string; merchant_id: string; fiat_currency: string; amount_micro_pay: string | number; created_at: Date }>`
    select b.id, b.merchant_id, b.fiat_currency, b.amount_micro_pay, b.created_at
    from (values ${values}) as w(fiat_currency, amount_micro_pay, wanted)
    cross join lateral (
      select id, merchant_id, fiat_currency, amount_micro_pay, created_at from buy_orders
      where status = 'pending' and is_sandbox = ${is_sandbox} and fiat_currency = w.fiat_currency and amount_micro_pay = w.amount_micro_pay and expires_at > ${now}
      order by created_at, id
      limit w.wanted
    ) b
    order by b.created_at, b.id`.execute(executor);
  return result.rows.map((row) => ({ ...row, amount_micro_pay: Number(row.amount_micro_pay) }));
}

/** For the matcher: pending -> matched for a batch in one statement (same rule as markSellsMatched); returns the rows. */
export async function markBuysMatched(trx: Trx, pairs: readonly { buy_order_id: string; sell_order_id: string; mint_transfer_id: string }[], at: Date): Promise<BuyOrderRow[]> {
  if (pairs.length === 0) return [];
  const values = sql.join(pairs.map((pair) => sql`(${pair.buy_order_id}::uuid, ${pair.sell_order_id}::uuid, ${pair.mint_transfer_id}::uuid)`));
  const result = await sql<BuyOrderRow>`
    update buy_orders as b set status = 'matched', matched_sell_order_id = v.sell_order_id, mint_transfer_id = v.mint_transfer_id, matched_at = ${at}
    from (values ${values}) as v(buy_order_id, sell_order_id, mint_transfer_id)
    where b.id = v.buy_order_id and b.status = 'pending'
    returning b.*`.execute(trx);
  if (result.rows.length !== pairs.length) throw new AppError('BUY_ORDER_BAD_STATE', 'A buy order of the batch changed status concurrently');
  return result.rows.map((row) => ({ ...row, amount_micro_pay: Number(row.amount_micro_pay), fiat_amount: Number(row.fiat_amount) }));
}

export async function lockPendingBuys(trx: Trx, ids: readonly string[]): Promise<BuyOrderRow[]> {
  if (ids.length === 0) return [];
  return trx.selectFrom('buy_orders').selectAll().where('id', 'in', [...ids]).where('status', '=', 'pending').forUpdate().execute();
}
