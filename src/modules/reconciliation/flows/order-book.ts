import { expectedAccount, isIssuanceOf } from '../accounts.ts';
import type { Expected, Flow, IdentityBreak } from './flow.ts';

/**
 * Sell orders and the fills of buy orders, derived together because each fill's mint must be answered by its sell
 * order: the sell order reserves its PAY (available -> reserve), and when it ends releases what was not sold, burns
 * what was sold when its cash leg completes (key = the order id) or, on a failed order with several fills, the fills
 * whose transfer was confirmed (the seller's verified slip, or a dispute resolved for the buyer: `burn-paid`). Each fill mints its PAY to the buyer from the order's mint source
 * (`buy_order:<buy>:fill:<sell>`) and, when the cash leg failed, the buyer's PAY is burned back (`:reversal`) up to
 * what it held, the rest recorded as its shortfall.
 *
 * Identities: the fills of an order add up to its filled PAY; a completed order's fills stand (none reversed); a
 * failed order's fills are each either confirmed paid or reversed, and a reversal plus its shortfall is the whole fill;
 * an order in flight has reversed nothing; the mint source is an issuance account of the order's mode.
 */
export const orderBookFlow: Flow = {
  name: 'order_book',
  async derive(executor) {
    const orders = await executor.selectFrom('sell_orders').selectAll().orderBy('id').execute();
    const fills = await executor
      .selectFrom('order_fills')
      .innerJoin('buy_orders', 'buy_orders.id', 'order_fills.buy_order_id')
      .select([
        'order_fills.id',
        'order_fills.is_sandbox',
        'order_fills.sell_order_id',
        'order_fills.buy_order_id',
        'order_fills.amount_micro_pay',
        'order_fills.reversed_at',
        'order_fills.reversed_micro_pay',
        'order_fills.shortfall_micro_pay',
        'order_fills.confirmed_at',
        'buy_orders.merchant_id',
      ])
      .execute();
    const verified = await executor
      .selectFrom('sell_order_cash_leg_attempts')
      .select(['sell_order_id', 'buy_order_id'])
      .where('outcome', '=', 'verified')
      .execute();
    const fills_of = Map.groupBy(fills, (fill) => fill.sell_order_id);
    const confirmed = new Set(verified.map((row) => `${row.sell_order_id}/${row.buy_order_id}`));

    const expected: Expected[] = [];
    const breaks: IdentityBreak[] = [];
    for (const order of orders) {
      const rows = [{ table: 'sell_orders', id: order.id }];
      const available = expectedAccount.available(order.merchant_id, order.is_sandbox);
      const reserve = expectedAccount.reserve(order.merchant_id, order.is_sandbox);
      const issuance = order.mint_source_account ?? expectedAccount.world(order.is_sandbox);
      const amount = Number(order.amount_micro_pay);
      const filled = Number(order.filled_micro_pay);
      const own = fills_of.get(order.id) ?? [];
      const broken = (name: string, detail: string) =>
        breaks.push({ key: `identity:${name}:${order.id}`, cause: 'sell_order', detail, rows });
      const move = (
        key: string,
        kind: Expected['kind'],
        debit: string,
        credit: string,
        amount_micro_pay: number,
      ): Expected => ({
        key,
        kind,
        debit_account: debit,
        credit_account: credit,
        amount_micro_pay,
        cause: 'sell_order',
        ...(kind === 'burn' ? { supply: 'sell_order_completion' as const } : {}),
        rows,
      });

      if (!isIssuanceOf(issuance, order.is_sandbox))
        broken('mint_source', `mint source ${issuance} is not an issuance account of the order's mode`);
      // An order that pays a refund out reserves from the refund's hold: the refunds flow derives that move.
      if (order.refund_id === null)
        expected.push(move(`sell_order:${order.id}:reserve`, 'transfer', available, reserve, amount));
      // Fills confirmed paid count only where the order has several (one fill confirmed completes the order).
      // A fill is confirmed by a verified slip for its buyer's transfer or by a dispute resolved for its buyer.
      const paid =
        own.length > 1
          ? own.filter((fill) => fill.confirmed_at !== null || confirmed.has(`${order.id}/${fill.buy_order_id}`))
          : [];
      const paid_micro_pay = order.status === 'failed' ? paid.reduce((sum, fill) => sum + fill.amount_micro_pay, 0) : 0;
      const reserved = filled > 0 ? filled : amount;
      if (order.status === 'failed' && reserved > paid_micro_pay)
        expected.push(
          move(`sell_order:${order.id}:release`, 'transfer', reserve, available, reserved - paid_micro_pay),
        );
      if (paid_micro_pay > 0)
        expected.push(move(`sell_order:${order.id}:burn-paid`, 'burn', reserve, issuance, paid_micro_pay));
      if (order.status !== 'pending' && filled > 0 && filled < amount)
        expected.push(move(`sell_order:${order.id}:release-unfilled`, 'transfer', reserve, available, amount - filled));
      if (order.status === 'completed') expected.push(move(order.id, 'burn', reserve, issuance, filled));

      if (own.length > 0) {
        const sum = own.reduce((total, fill) => total + Number(fill.amount_micro_pay), 0);
        if (sum !== filled) broken('fills_sum', `fills add up to ${sum} micro-PAY, the order filled ${filled}`);
      }
      for (const fill of own) {
        const buyer = expectedAccount.available(fill.merchant_id, fill.is_sandbox);
        const fill_rows = [{ table: 'order_fills', id: fill.id }, ...rows];
        const fill_amount = Number(fill.amount_micro_pay);
        const reversed = Number(fill.reversed_micro_pay);
        const shortfall = Number(fill.shortfall_micro_pay);
        const key = `buy_order:${fill.buy_order_id}:fill:${order.id}`;
        expected.push({
          key,
          kind: 'mint',
          debit_account: issuance,
          credit_account: buyer,
          amount_micro_pay: fill_amount,
          cause: 'buy_order_fill',
          supply: 'buy_order_fill',
          rows: fill_rows,
        });
        if (reversed > 0)
          expected.push({
            key: `${key}:reversal`,
            kind: 'burn',
            debit_account: buyer,
            credit_account: issuance,
            amount_micro_pay: reversed,
            cause: 'buy_order_fill',
            supply: 'buy_order_fill',
            rows: fill_rows,
          });
        const fill_broken = (detail: string) =>
          breaks.push({ key: `identity:fill:${fill.id}`, cause: 'buy_order_fill', detail, rows: fill_rows });
        const was_reversed = fill.reversed_at !== null;
        if (was_reversed && reversed + shortfall !== fill_amount)
          fill_broken(`reversed ${reversed} + shortfall ${shortfall} is not the fill's ${fill_amount} micro-PAY`);
        else if (!was_reversed && reversed + shortfall !== 0)
          fill_broken(`not reversed, yet ${reversed} reversed and ${shortfall} short`);
        else if (order.status === 'completed' && was_reversed)
          fill_broken("reversed although its sell order's cash leg completed (the order's burn already answers it)");
        else if (order.status === 'failed' && !was_reversed && !paid.includes(fill))
          fill_broken('its sell order failed, and it is neither confirmed paid nor reversed: the mint is unanswered');
        else if (order.status !== 'failed' && order.status !== 'completed' && was_reversed)
          fill_broken('reversed while its sell order is still in flight');
      }
    }
    return { expected, breaks };
  },
};
