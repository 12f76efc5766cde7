import { expectedAccount } from '../accounts.ts';
import type { Expected, Flow } from './flow.ts';

/**
 * Dispute resolutions, derived from the outcome and the state the sell order was in when the dispute was resolved
 * (never from the effect the dispute recorded): `favor_merchant` on an order whose cash leg had completed mints its
 * traded PAY back to the seller, `favor_counterparty` on an order that had failed after a match burns it from the
 * seller; the first such resolution of an order moves PAY, later ones nothing. Key = the dispute id, against the
 * disputes issuance account.
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
    // A resolution at the very instant its order ended (the same clock reading: they ran concurrently, and the
    // resolver reads the order without locking it) may have seen the order before or after; the rows cannot tell
    // which, so there alone the journal says whether the move happened (its accounts and amount are still checked).
    const posted = new Set(
      (
        await executor
          .selectFrom('ledger_transfers')
          .select('key')
          .where('key', 'in', rows.map((row) => row.id).concat(['']))
          .execute()
      ).map((row) => row.key),
    );
    const moved = new Set<string>();
    const expected: Expected[] = [];
    for (const dispute of rows) {
      if (moved.has(dispute.sell_order_id) || dispute.resolved_at === null) continue;
      const at = dispute.resolved_at.getTime();
      const ended = (time: Date | null) =>
        time === null ? false : time.getTime() < at || (time.getTime() === at && posted.has(dispute.id));
      const completed = ended(dispute.completed_at);
      const failed_after_match = ended(dispute.failed_at) && dispute.matched_buy_order_id !== null;
      const kind =
        dispute.outcome === 'favor_merchant' && completed
          ? 'mint'
          : dispute.outcome === 'favor_counterparty' && failed_after_match
            ? 'burn'
            : null;
      if (!kind) continue;
      moved.add(dispute.sell_order_id);
      const filled = Number(dispute.filled_micro_pay);
      const seller = expectedAccount.available(dispute.merchant_id, dispute.is_sandbox);
      const issuance = expectedAccount.disputes(dispute.is_sandbox);
      expected.push({
        key: dispute.id,
        kind,
        debit_account: kind === 'mint' ? issuance : seller,
        credit_account: kind === 'mint' ? seller : issuance,
        amount_micro_pay: filled > 0 ? filled : Number(dispute.amount_micro_pay),
        cause: 'dispute',
        supply: 'dispute',
        rows: [
          { table: 'disputes', id: dispute.id },
          { table: 'sell_orders', id: dispute.sell_order_id },
        ],
      });
    }
    return { expected, breaks: [] };
  },
};
