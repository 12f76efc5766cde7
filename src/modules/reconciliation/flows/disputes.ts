import { expectedAccount } from '../accounts.ts';
import type { Expected, Flow } from './flow.ts';

/**
 * Dispute resolutions, derived from the outcome, the party that opened the dispute, the state the sell order was in
 * when it was resolved and its fills (never from the effect the dispute recorded): PAY follows the fiat, between the
 * parties, never minted or burned on one side.
 * - `favor_merchant` on an order whose cash leg had completed: each disputed fill's PAY from its buyer back to the
 *   seller;
 * - `favor_counterparty` on an order that had failed after a match: each disputed fill that was taken back at the
 *   failure, its PAY from the seller back to its buyer;
 * - one transfer per fill (`dispute:<dispute id>:fill:<fill id>`) of the fill's whole PAY less what its payer could
 *   not pay (the shortfall recorded under the same key, collected later under keys of its own: the shortfalls flow);
 * - the disputed fills are the opening buyer's (a buyer's dispute) or all of them; a fill moves at most once (the
 *   first resolution that concerns it), so each buyer of an order gets its own fills back by its own dispute. An order
 *   resolved in flight completes or fails as its cash leg (order book).
 * Resolutions made before resolutions followed the fiat minted or burned against the disputes issuance account (key =
 * the dispute id); those are derived as they were made.
 */
export const disputesFlow: Flow = {
  name: 'disputes',
  async derive(executor) {
    const rows = await executor
      .selectFrom('disputes')
      .innerJoin('sell_orders', 'sell_orders.id', 'disputes.sell_order_id')
      .select([
        'disputes.id',
        'disputes.outcome',
        'disputes.resolved_at',
        'disputes.ledger_effect',
        'disputes.opened_by',
        'disputes.opened_by_merchant_id',
        'sell_orders.id as sell_order_id',
        'sell_orders.merchant_id',
        'sell_orders.is_sandbox',
        'sell_orders.amount_micro_pay',
        'sell_orders.filled_micro_pay',
        'sell_orders.matched_buy_order_id',
        'sell_orders.completed_at',
        'sell_orders.failed_at',
      ])
      .where('disputes.status', '=', 'resolved')
      .orderBy('disputes.resolved_at')
      .orderBy('disputes.id')
      .execute();
    // Resolutions in the order they were made (their gateway.dispute.resolved events; the clock may not tell them apart).
    const resolved_seq = new Map(
      (
        await executor
          .selectFrom('events')
          .select(['resource_id', (eb) => eb.fn.min('seq').as('seq')])
          .where('type', '=', 'gateway.dispute.resolved')
          .where('resource_type', '=', 'dispute')
          .groupBy('resource_id')
          .execute()
      ).map((row) => [row.resource_id, Number(row.seq)]),
    );
    rows.sort(
      (a, b) =>
        (a.resolved_at?.getTime() ?? 0) - (b.resolved_at?.getTime() ?? 0) ||
        (resolved_seq.get(a.id) ?? 0) - (resolved_seq.get(b.id) ?? 0),
    );
    const fills = Map.groupBy(
      await executor
        .selectFrom('order_fills')
        .innerJoin('buy_orders', 'buy_orders.id', 'order_fills.buy_order_id')
        .select([
          'order_fills.id',
          'order_fills.sell_order_id',
          'order_fills.amount_micro_pay',
          'order_fills.reversed_at',
          'buy_orders.merchant_id as buyer_id',
        ])
        .execute(),
      (fill) => fill.sell_order_id,
    );
    const owed = new Map(
      (
        await executor
          .selectFrom('pay_shortfalls')
          .select(['origin_key', 'amount_micro_pay'])
          .where('origin_key', 'like', 'dispute:%')
          .execute()
      ).map((row) => [row.origin_key, Number(row.amount_micro_pay)]),
    );
    /** Orders a resolution made before they followed the fiat moved whole; otherwise fill by fill. */
    const moved_whole = new Set<string>();
    const moved_fills = new Set<string>();
    const expected: Expected[] = [];
    for (const dispute of rows) {
      if (moved_whole.has(dispute.sell_order_id) || dispute.resolved_at === null) continue;
      const rows_of = [
        { table: 'disputes', id: dispute.id },
        { table: 'sell_orders', id: dispute.sell_order_id },
      ];
      const seller = expectedAccount.available(dispute.merchant_id, dispute.is_sandbox);
      if (dispute.ledger_effect === 'mint' || dispute.ledger_effect === 'burn') {
        // made before resolutions followed the fiat
        moved_whole.add(dispute.sell_order_id);
        const filled = Number(dispute.filled_micro_pay);
        const issuance = expectedAccount.disputes(dispute.is_sandbox);
        const mint = dispute.ledger_effect === 'mint';
        expected.push({
          key: dispute.id,
          kind: mint ? 'mint' : 'burn',
          debit_account: mint ? issuance : seller,
          credit_account: mint ? seller : issuance,
          amount_micro_pay: filled > 0 ? filled : Number(dispute.amount_micro_pay),
          cause: 'dispute',
          supply: 'dispute',
          rows: rows_of,
        });
        continue;
      }
      const at = dispute.resolved_at.getTime();
      // The order's state when the resolution was made (an order resolved in flight completed or failed at it, which
      // moves nothing here: favor_counterparty completed it, favor_merchant failed it).
      const completed = dispute.completed_at !== null && dispute.completed_at.getTime() <= at;
      const failed_after_match =
        dispute.failed_at !== null && dispute.failed_at.getTime() <= at && Number(dispute.filled_micro_pay) > 0;
      const back_to_seller = dispute.outcome === 'favor_merchant' && completed;
      const back_to_buyers = dispute.outcome === 'favor_counterparty' && failed_after_match;
      if (!back_to_seller && !back_to_buyers) continue;
      const disputed = (fills.get(dispute.sell_order_id) ?? []).filter(
        (fill) =>
          (dispute.opened_by !== 'buyer' || fill.buyer_id === dispute.opened_by_merchant_id) &&
          (back_to_seller ? fill.reversed_at === null : fill.reversed_at !== null) &&
          !moved_fills.has(fill.id),
      );
      for (const fill of disputed) {
        moved_fills.add(fill.id);
        const key = `dispute:${dispute.id}:fill:${fill.id}`;
        const buyer = expectedAccount.available(fill.buyer_id, dispute.is_sandbox);
        const amount_micro_pay = Number(fill.amount_micro_pay) - (owed.get(key) ?? 0);
        if (amount_micro_pay <= 0) continue;
        expected.push({
          key,
          kind: 'transfer',
          debit_account: back_to_seller ? buyer : seller,
          credit_account: back_to_seller ? seller : buyer,
          amount_micro_pay,
          cause: 'dispute',
          rows: [...rows_of, { table: 'order_fills', id: fill.id }],
        });
      }
    }
    return { expected, breaks: [] };
  },
};
