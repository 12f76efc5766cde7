import type { Trx } from '../../db/database.ts';
import { AppError } from '../../lib/errors.ts';
import { createRefundPayout, findRefundPayouts, lockRefundPayout } from '../sell-orders/refund-payouts.ts';
import type { SellOrderRow } from '../sell-orders/tables.ts';
import { endRefund, succeedRefund, type RefundsDeps } from './service.ts';
import { lockRefund } from './state.ts';
import type { RefundRow } from './tables.ts';

/**
 * A live pay_balance refund whose destination is known is paid out through the payout network (DESIGN 3c "Who pays a
 * refund"): it becomes a sell order whose payout destination is the buyer, funded from the refund's hold, and it
 * ends as that order ends: `succeeded` when its cash leg completes, `failed` when it fails (`canceled` when the
 * merchant cancels it), the PAY back in the merchant's available balance by the order's own release. A sandbox refund
 * has no payout network to pay a buyer: the sandbox simulation plays its end instead.
 */

/**
 * Runs a move of the refund's sell order in the refund's own words: a ledger outage is the refund routes' 502
 * LEDGER_UNAVAILABLE (nothing kept: the transaction rolls back), as on the refund's own hold.
 */
export async function inRefundTerms<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof AppError && error.code === 'SELL_ORDER_LEDGER_UNAVAILABLE')
      throw new AppError(
        'LEDGER_UNAVAILABLE',
        'The PAY ledger is unavailable; nothing was changed, retry',
        error.details,
      );
    throw error;
  }
}

export type PayoutDeps = RefundsDeps & { sell_orders: NonNullable<RefundsDeps['sell_orders']> };

export function payoutDeps(deps: RefundsDeps): PayoutDeps {
  if (!deps.sell_orders) throw new Error('refunds: the sell-orders port is not wired (pay_balance refunds need it)');
  return deps as PayoutDeps;
}

/** Does this refund get a sell order now? (its row as the caller just wrote it) */
const paysOutNow = (refund: RefundRow) =>
  refund.funding === 'pay_balance' &&
  !refund.is_sandbox &&
  refund.status === 'pending' &&
  refund.destination !== null &&
  refund.hold_micro_pay !== null &&
  refund.sell_order_id === null;

/**
 * In the transaction that made the destination known (create, or the claim page): the refund's sell order, its reserve
 * taken from the refund hold, and the refund pointing at it. Answers the refund row as it now is.
 */
export async function startRefundPayout(deps: RefundsDeps, trx: Trx, refund: RefundRow, now: Date): Promise<RefundRow> {
  const destination = refund.destination;
  if (!paysOutNow(refund) || destination === null || refund.hold_micro_pay === null) return refund;
  const payout = {
    refund_id: refund.id,
    merchant_id: refund.merchant_id,
    is_sandbox: refund.is_sandbox,
    hold_micro_pay: Number(refund.hold_micro_pay),
    amount_minor: Number(refund.amount_minor),
    currency: refund.currency,
    destination,
  };
  const sell_orders = payoutDeps(deps).sell_orders;
  const order = await inRefundTerms(() => createRefundPayout(sell_orders, trx, payout, now));
  return trx
    .updateTable('refunds')
    .set({ sell_order_id: order.id })
    .where('id', '=', refund.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * The refund follows its ended sell order, in the order's transaction (the order is locked first, then the refund):
 * completed -> `succeeded`; failed -> `failed` with the order's reason, or `canceled` when the merchant canceled the
 * order. A refund that already ended (canceled with its order) is left as it is.
 */
export async function followRefundPayout(deps: RefundsDeps, trx: Trx, order: SellOrderRow, at: Date): Promise<boolean> {
  if (order.refund_id === null) return false;
  const refund = await lockRefund(trx, order.refund_id);
  if (refund?.status !== 'pending' || refund.sell_order_id !== order.id) return false;
  if (order.status === 'completed') await succeedRefund(deps, trx, refund, at);
  else if (order.status === 'failed' && order.failure_reason === 'cancelled_by_merchant')
    await endRefund(deps, trx, refund, at, 'canceled', null);
  else if (order.status === 'failed')
    await endRefund(deps, trx, refund, at, 'failed', order.failure_reason ?? 'payout_failed');
  else return false;
  return true;
}

/**
 * For the refunds' sweep: pending refunds whose sell order ended on a path that does not tell refunds (a dispute's
 * resolution) follow it here. Every waiting refund is looked at, page by page (orders still in the book would
 * otherwise fill a first page for ever). Returns how many moved.
 */
export async function followEndedPayouts(deps: RefundsDeps, batch: number): Promise<number> {
  let moved = 0;
  let after: string | null = null;
  for (;;) {
    const waiting = await deps.db
      .selectFrom('refunds')
      .select(['id', 'sell_order_id'])
      .where('status', '=', 'pending')
      .where('funding', '=', 'pay_balance')
      .where('sell_order_id', 'is not', null)
      .$if(after !== null, (query) => query.where('id', '>', after!))
      .orderBy('id')
      .limit(batch)
      .execute();
    const orders = await findRefundPayouts(
      deps.db,
      waiting.flatMap((row) => (row.sell_order_id ? [row.sell_order_id] : [])),
    );
    for (const ended of orders.filter((order) => order.status === 'completed' || order.status === 'failed')) {
      const followed = await deps.db
        .transaction()
        .execute(async (trx) => followRefundPayout(deps, trx, await lockRefundPayout(trx, ended.id), deps.clock.now()));
      if (followed) moved += 1;
    }
    if (waiting.length < batch) return moved;
    after = waiting.at(-1)!.id;
  }
}
