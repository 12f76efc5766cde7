import { randomUUID } from 'node:crypto';
import { sql, type SqlBool } from 'kysely';
import type { Db, Executor, Trx } from '../../db/database.ts';
import { defineStateMachine, mover } from '../../db/state-machine.ts';
import { OWNERSHIP, owned } from '../../http/ownership.ts';
import { listPage } from '../../http/pagination.ts';
import type { MerchantScope } from '../../http/principal.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Currency } from '../../lib/money.ts';
import { eventAbout, recordEvent, recordEvents } from '../events/outbox.ts';
import type { BuyOrderRow, BuyOrderStatus, FillRow, NewFill } from './tables.ts';
import type { BuyOrderView } from './schema.ts';
import { qrPng } from '../reference/promptpay.ts';
import { notFound } from '../../lib/errors.ts';
import { buyBatchChangedConcurrently, buyOrderNotCancellable, noQrForRail } from './errors.ts';
import { fillPromptpayPayload, presentBuyOrder } from './present.ts';

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

export const BUY_ORDER_STATES = defineStateMachine({
  table: 'buy_orders',
  noun: 'buy order',
  moves: BUY_ORDER_TRANSITIONS,
  entered_at: { matched: 'matched_at', cancelled: 'cancelled_at', expired: 'expired_at' },
  conflict: 'BUY_ORDER_BAD_STATE',
});

export type { BuyOrderView } from './schema.ts';

/** One move of a buy order through the shared state machine: a cancel racing the matcher loses with 409 BUY_ORDER_BAD_STATE. */
export const transitionBuyOrder = mover(BUY_ORDER_STATES);

export async function emitBuyOrderEvent(trx: Trx, at: Date, order: BuyOrderRow, type: string): Promise<BuyOrderView> {
  const view = presentBuyOrder(order, order.filled_micro_pay > 0 ? await fillsOfBuyOrder(trx, order.id) : []);
  await recordEvent(trx, at, { ...eventAbout('buy_order', order), type, data: { ...view } });
  return view;
}

/** Several buy-order events in one statement (the matcher's batch), in this order. */
export async function emitBuyOrderEvents(
  trx: Trx,
  at: Date,
  events: readonly { order: BuyOrderRow; type: string }[],
): Promise<void> {
  const fills = await fillsByBuyOrder(
    trx,
    events.map(({ order }) => order.id),
  );
  await recordEvents(
    trx,
    at,
    events.map(({ order, type }) => ({
      ...eventAbout('buy_order', order),
      type,
      data: { ...presentBuyOrder(order, fills.get(order.id)) },
    })),
  );
}

/** A buy order's fills, in their numbers' order. */
export async function fillsOfBuyOrder(executor: Executor, buy_order_id: string): Promise<FillRow[]> {
  return executor
    .selectFrom('order_fills')
    .selectAll()
    .where('buy_order_id', '=', buy_order_id)
    .orderBy('buy_fill_number')
    .execute();
}

/** The fills of several buy orders, grouped by buy order, each group in its numbers' order. */
export async function fillsByBuyOrder(
  executor: Executor,
  buy_order_ids: readonly string[],
): Promise<Map<string, FillRow[]>> {
  if (buy_order_ids.length === 0) return new Map();
  const rows = await executor
    .selectFrom('order_fills')
    .selectAll()
    .where('buy_order_id', 'in', [...new Set(buy_order_ids)])
    .orderBy('buy_fill_number')
    .execute();
  return Map.groupBy(rows, (fill) => fill.buy_order_id);
}

/** For the matcher: how many fills each of these buy orders already has (its next fill's number follows). */
export async function fillCounts(executor: Executor, buy_order_ids: readonly string[]): Promise<Map<string, number>> {
  if (buy_order_ids.length === 0) return new Map();
  const rows = await executor
    .selectFrom('order_fills')
    .select(['buy_order_id', (eb) => eb.fn.countAll<string>().as('count')])
    .where('buy_order_id', 'in', [...buy_order_ids])
    .groupBy('buy_order_id')
    .execute();
  return new Map(rows.map((row) => [row.buy_order_id, Number(row.count)]));
}

async function findOwned(executor: Executor, scope: MerchantScope, id: string): Promise<BuyOrderRow> {
  return owned(
    await executor.selectFrom('buy_orders').selectAll().where('id', '=', id).executeTakeFirst(),
    scope,
    OWNERSHIP.buy_order,
  );
}

export interface CreateBuyOrderInput {
  amount_micro_pay: number;
  fiat_currency: Currency;
  fiat_amount: number;
}

/** A pending buy order; no PAY moves until the matcher pairs it (the mint then credits the buyer). */
export async function createBuyOrder(
  deps: BuyOrdersDeps,
  trx: Trx,
  scope: MerchantScope,
  input: CreateBuyOrderInput,
): Promise<BuyOrderView> {
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
      filled_micro_pay: 0,
      filled_fiat_amount: 0,
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

export async function getBuyOrder(
  deps: Pick<BuyOrdersDeps, 'db'>,
  scope: MerchantScope,
  id: string,
): Promise<BuyOrderView> {
  const order = await findOwned(deps.db, scope, id);
  return presentBuyOrder(order, await fillsOfBuyOrder(deps.db, order.id));
}

/** The PromptPay QR (PNG) of fill `number` of the caller's buy order; 404 when the fill's seller is not paid by PromptPay. */
export async function fillQrPng(
  deps: Pick<BuyOrdersDeps, 'db'>,
  scope: MerchantScope,
  id: string,
  number: number,
): Promise<Buffer> {
  const order = await findOwned(deps.db, scope, id);
  const fill = await deps.db
    .selectFrom('order_fills')
    .selectAll()
    .where('buy_order_id', '=', order.id)
    .where('buy_fill_number', '=', number)
    .executeTakeFirst();
  if (!fill) throw notFound('Fill');
  const payload = fillPromptpayPayload(fill, order.fiat_currency);
  if (!payload) throw noQrForRail(fill.payee?.destination.rail ?? 'unknown');
  return qrPng(payload);
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
  let select = deps.db
    .selectFrom('buy_orders')
    .selectAll()
    .where('merchant_id', '=', scope.merchant_id)
    .where('is_sandbox', '=', scope.is_sandbox);
  if (query.status?.length) select = select.where('status', 'in', query.status);
  if (query.fiat_currency) select = select.where('fiat_currency', '=', query.fiat_currency);
  if (query.created_after) select = select.where('created_at', '>=', new Date(query.created_after));
  if (query.created_before) select = select.where('created_at', '<', new Date(query.created_before));
  const page = await listPage(select, query, (row: BuyOrderRow) => row);
  const fills = await fillsByBuyOrder(
    deps.db,
    page.data.filter((row) => row.filled_micro_pay > 0).map((row) => row.id),
  );
  return { ...page, data: page.data.map((row) => presentBuyOrder(row, fills.get(row.id))) };
}

/** Only a pending buy order can be cancelled; a matched one already received its PAY (409 BUY_ORDER_BAD_STATE). */
export async function cancelBuyOrder(
  deps: BuyOrdersDeps,
  trx: Trx,
  scope: MerchantScope,
  id: string,
): Promise<BuyOrderView> {
  const now = deps.clock.now();
  await findOwned(trx, scope, id);
  const order = await trx
    .selectFrom('buy_orders')
    .selectAll()
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirstOrThrow();
  if (order.status !== 'pending') throw buyOrderNotCancellable(order.status);
  return emitBuyOrderEvent(trx, now, await transitionBuyOrder(trx, order, 'cancelled', now), 'buy_order.cancelled');
}

/** Pending buy orders past `expires_at` become `expired` (event `buy_order.expired`, additive). */
export async function expireBuyOrders(deps: BuyOrdersDeps, batch = 200): Promise<number> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const due = await trx
      .selectFrom('buy_orders')
      .selectAll()
      .where('status', '=', 'pending')
      .where('expires_at', '<=', now)
      .limit(batch)
      .forUpdate()
      .skipLocked()
      .execute();
    for (const order of due)
      await emitBuyOrderEvent(trx, now, await transitionBuyOrder(trx, order, 'expired', now), 'buy_order.expired');
    return due.length;
  });
}

/** For the matcher: a window of the buy book (pending, unexpired, oldest first), locked for the pass (SKIP LOCKED: a row a cancel holds waits for the next pass). */
export async function pendingBuysWindow(
  trx: Trx,
  is_sandbox: boolean,
  now: Date,
  limit: number,
  after?: { created_at: Date; id: string },
): Promise<BuyOrderRow[]> {
  let select = trx
    .selectFrom('buy_orders')
    .selectAll()
    .where('status', '=', 'pending')
    .where('is_sandbox', '=', is_sandbox)
    .where('expires_at', '>', now);
  if (after) select = select.where(sql<SqlBool>`(created_at, id) > (${after.created_at}, ${after.id})`);
  return select.orderBy('created_at').orderBy('id').limit(limit).forUpdate().skipLocked().execute();
}

export interface BuyFillUpdate {
  buy_order_id: string;
  filled_micro_pay: number;
  filled_fiat_amount: number;
  /** The sell order of the buy's first fill (kept once set). */
  first_sell_order_id: string;
  first_mint_transfer_id: string;
  /** True when the buy is now filled in full: pending -> matched. */
  complete: boolean;
}

/**
 * For the matcher: the new fill totals of a batch of buy orders in one statement; a fully filled one becomes `matched`.
 * Still `WHERE status = 'pending'` (the rows are locked by the caller): a count that differs fails the batch with 409.
 */
export async function applyBuyFills(trx: Trx, updates: readonly BuyFillUpdate[], at: Date): Promise<BuyOrderRow[]> {
  if (updates.length === 0) return [];
  const values = sql.join(
    updates.map(
      (u) =>
        sql`(${u.buy_order_id}::uuid, ${u.filled_micro_pay}::bigint, ${u.filled_fiat_amount}::bigint, ${u.first_sell_order_id}::uuid, ${u.first_mint_transfer_id}::uuid, ${u.complete}::boolean)`,
    ),
  );
  const result = await sql<BuyOrderRow>`
    update buy_orders as b set
      filled_micro_pay = v.filled, filled_fiat_amount = v.fiat,
      matched_sell_order_id = coalesce(b.matched_sell_order_id, v.sell_order_id), mint_transfer_id = coalesce(b.mint_transfer_id, v.mint_transfer_id),
      status = case when v.complete then 'matched' else b.status end,
      matched_at = case when v.complete then ${at}::timestamptz else b.matched_at end
    from (values ${values}) as v(buy_order_id, filled, fiat, sell_order_id, mint_transfer_id, complete)
    where b.id = v.buy_order_id and b.status = 'pending'
    returning b.*`.execute(trx);
  if (result.rows.length !== updates.length) throw buyBatchChangedConcurrently();
  return result.rows.map((row) => ({
    ...row,
    amount_micro_pay: Number(row.amount_micro_pay),
    fiat_amount: Number(row.fiat_amount),
    filled_micro_pay: Number(row.filled_micro_pay),
    filled_fiat_amount: Number(row.filled_fiat_amount),
  }));
}

export async function insertFills(trx: Trx, fills: readonly NewFill[]): Promise<void> {
  if (fills.length > 0)
    await trx
      .insertInto('order_fills')
      .values(
        fills.map((fill) => ({
          ...fill,
          payee: fill.payee == null || typeof fill.payee === 'string' ? fill.payee : JSON.stringify(fill.payee),
        })),
      )
      .execute();
}

/** The fills of some sell orders, oldest first (for their cash-leg instructions). */
export async function fillsOfSellOrders(executor: Executor, sell_order_ids: readonly string[]) {
  if (sell_order_ids.length === 0) return [];
  return executor
    .selectFrom('order_fills')
    .selectAll()
    .where('sell_order_id', 'in', [...sell_order_ids])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** A sell order's fills with the merchant of each fill's buy order (whom a dispute's resolution moves PAY with). */
export async function fillsWithBuyers(executor: Executor, sell_order_id: string) {
  return executor
    .selectFrom('order_fills')
    .innerJoin('buy_orders', 'buy_orders.id', 'order_fills.buy_order_id')
    .selectAll('order_fills')
    .select('buy_orders.merchant_id as buyer_merchant_id')
    .where('order_fills.sell_order_id', '=', sell_order_id)
    .orderBy('order_fills.created_at')
    .orderBy('order_fills.id')
    .execute();
}
