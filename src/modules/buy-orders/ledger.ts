import { sql } from 'kysely';
import type { Executor, Trx } from '../../db/database.ts';
import { accounts, type Ledger } from '../ledger/port.ts';
import { takeUpTo } from '../ledger/shortfalls.ts';

/** Ledger key of the burn that takes a fill's PAY back from its buyer. */
export const fillReversalKey = (buy_order_id: string, sell_order_id: string) =>
  `buy_order:${buy_order_id}:fill:${sell_order_id}:reversal`;

/** One fill taken back: what was burned from the buyer and what it had already spent (its deficit). */
export interface FillReversal {
  fill_id: string;
  buy_order_id: string;
  buyer_merchant_id: string;
  amount_micro_pay: number;
  reversed_micro_pay: number;
  shortfall_micro_pay: number;
  transfer_id: string | null;
}

/**
 * A sell order's cash leg failed: the PAY its fills minted to the buyers is unbacked, so each fill is taken back in the
 * caller's transaction. The buyer's available PAY is burned to the issuance account it was minted from, up to the
 * fill's amount; what the buyer had already spent is recorded as its shortfall (the balance view's deficit), never an
 * overdraft. A fill already reversed is left as it is, so a retried failure takes nothing twice.
 */
export async function reverseFillsOfSellOrder(
  trx: Trx,
  ledger: Ledger,
  order: { id: string; is_sandbox: boolean; mint_source_account: string | null },
  at: Date,
  /** Buy orders whose transfer the seller confirmed: their fills stand. */
  paid_buy_order_ids: ReadonlySet<string> = new Set(),
): Promise<FillReversal[]> {
  const fills = await trx
    .selectFrom('order_fills')
    .innerJoin('buy_orders', 'buy_orders.id', 'order_fills.buy_order_id')
    .select(['order_fills.id', 'order_fills.buy_order_id', 'order_fills.amount_micro_pay', 'buy_orders.merchant_id'])
    .where('order_fills.sell_order_id', '=', order.id)
    .where('order_fills.reversed_at', 'is', null)
    .orderBy('order_fills.created_at')
    .orderBy('order_fills.id')
    .forUpdate('order_fills')
    .execute();
  const reversals: FillReversal[] = [];
  for (const fill of fills) {
    if (paid_buy_order_ids.has(fill.buy_order_id)) continue;
    const buyer = accounts.merchantAvailable(fill.merchant_id, order.is_sandbox);
    const issuance = order.mint_source_account ?? accounts.world(order.is_sandbox);
    // What the buyer spent is its shortfall, collected from its next credits (ledger/shortfalls.ts).
    const { transfer, taken_micro_pay, shortfall_micro_pay } = await takeUpTo(
      ledger,
      trx,
      {
        key: fillReversalKey(fill.buy_order_id, order.id),
        kind: 'burn',
        debit_account: buyer,
        credit_account: issuance,
        amount_micro_pay: fill.amount_micro_pay,
        memo: `sell order ${order.id} cash leg failed: fill of buy order ${fill.buy_order_id} taken back`,
      },
      at,
    );
    const reversed_micro_pay = taken_micro_pay;
    await trx
      .updateTable('order_fills')
      .set({ reversed_at: at, reversed_micro_pay, shortfall_micro_pay })
      .where('id', '=', fill.id)
      .execute();
    reversals.push({
      fill_id: fill.id,
      buy_order_id: fill.buy_order_id,
      buyer_merchant_id: fill.merchant_id,
      amount_micro_pay: fill.amount_micro_pay,
      reversed_micro_pay,
      shortfall_micro_pay,
      transfer_id: transfer?.id ?? null,
    });
  }
  return reversals;
}

/**
 * PAY minted to a merchant's buy orders by fills whose own cash leg is not confirmed yet (nor taken back): it is in
 * the merchant's available balance but cannot be cashed out (the balance view's `unconfirmed_fills_micro_pay`).
 */
export async function unconfirmedFillsMicroPay(
  executor: Executor,
  merchant_id: string,
  is_sandbox: boolean,
): Promise<number> {
  const row = await executor
    .selectFrom('order_fills')
    .innerJoin('buy_orders', 'buy_orders.id', 'order_fills.buy_order_id')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('order_fills.amount_micro_pay'), sql<string>`0`).as('unconfirmed'))
    .where('buy_orders.merchant_id', '=', merchant_id)
    .where('buy_orders.is_sandbox', '=', is_sandbox)
    .where('order_fills.confirmed_at', 'is', null)
    .where('order_fills.reversed_at', 'is', null)
    .executeTakeFirst();
  return Number(row?.unconfirmed ?? 0);
}

/**
 * A fill's cash leg is confirmed (the seller's verified slip for that buyer's transfer): its PAY may now be cashed
 * out. `buy_order_id` null confirms every fill of the sell order (its completion).
 */
export async function confirmFills(
  trx: Trx,
  sell_order_id: string,
  buy_order_id: string | null,
  at: Date,
): Promise<void> {
  let update = trx
    .updateTable('order_fills')
    .set({ confirmed_at: at })
    .where('sell_order_id', '=', sell_order_id)
    .where('confirmed_at', 'is', null)
    .where('reversed_at', 'is', null);
  if (buy_order_id !== null) update = update.where('buy_order_id', '=', buy_order_id);
  await update.execute();
}
