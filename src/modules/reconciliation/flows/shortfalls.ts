import { isIssuanceOf } from '../accounts.ts';
import type { Expected, Flow, IdentityBreak } from './flow.ts';

/**
 * Shortfalls: PAY a merchant owed because a move took it back after it was spent, collected from its later credits.
 * Each collection row implies one posting under its own key, from the debtor's available account to the creditor: a
 * burn when the creditor is an issuance account (a reversal's shortfall: counted under `buy_order_fill`, the cause of
 * the mint it answers), a transfer to the other party otherwise (a dispute's).
 *
 * Identities: the collections of a shortfall add up to what it records as collected, never more than it; a fill taken
 * back with a shortfall has that shortfall recorded, owed to its mint source under the reversal's key.
 */
export const shortfallsFlow: Flow = {
  name: 'shortfalls',
  async derive(executor) {
    const shortfalls = await executor.selectFrom('pay_shortfalls').selectAll().execute();
    const collections = Map.groupBy(
      await executor.selectFrom('pay_shortfall_collections').selectAll().execute(),
      (row) => row.shortfall_id,
    );
    const expected: Expected[] = [];
    const breaks: IdentityBreak[] = [];
    const by_origin = new Map(shortfalls.map((row) => [row.origin_key, row]));
    for (const shortfall of shortfalls) {
      const rows = [{ table: 'pay_shortfalls', id: shortfall.id }];
      const is_sandbox = shortfall.debtor_account.startsWith('sandbox:');
      const burn = isIssuanceOf(shortfall.creditor_account, is_sandbox);
      let collected = 0;
      for (const collection of collections.get(shortfall.id) ?? []) {
        const amount_micro_pay = Number(collection.amount_micro_pay);
        collected += amount_micro_pay;
        expected.push({
          key: collection.key,
          kind: burn ? 'burn' : 'transfer',
          debit_account: shortfall.debtor_account,
          credit_account: shortfall.creditor_account,
          amount_micro_pay,
          cause: 'shortfall',
          ...(burn ? { supply: 'buy_order_fill' as const } : {}),
          rows,
        });
      }
      if (collected !== Number(shortfall.collected_micro_pay) || collected > Number(shortfall.amount_micro_pay))
        breaks.push({
          key: `identity:shortfall:${shortfall.id}`,
          cause: 'shortfall',
          detail: `collections add up to ${collected} micro-PAY; the shortfall of ${shortfall.amount_micro_pay} records ${shortfall.collected_micro_pay} collected`,
          rows,
        });
    }
    const short_fills = await executor
      .selectFrom('order_fills')
      .innerJoin('sell_orders', 'sell_orders.id', 'order_fills.sell_order_id')
      .select([
        'order_fills.id',
        'order_fills.buy_order_id',
        'order_fills.sell_order_id',
        'order_fills.shortfall_micro_pay',
        'order_fills.is_sandbox',
        'sell_orders.mint_source_account',
      ])
      .where('order_fills.shortfall_micro_pay', '>', 0)
      .execute();
    for (const fill of short_fills) {
      const recorded = by_origin.get(`buy_order:${fill.buy_order_id}:fill:${fill.sell_order_id}:reversal`);
      if (
        !recorded ||
        Number(recorded.amount_micro_pay) !== Number(fill.shortfall_micro_pay) ||
        (fill.mint_source_account !== null && recorded.creditor_account !== fill.mint_source_account)
      )
        breaks.push({
          key: `identity:fill_shortfall:${fill.id}`,
          cause: 'shortfall',
          detail: `the fill's shortfall of ${fill.shortfall_micro_pay} micro-PAY is not recorded as owed to its mint source`,
          rows: [{ table: 'order_fills', id: fill.id }],
        });
    }
    return { expected, breaks };
  },
};
