import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * A fill is confirmed when its own cash leg is: the seller's verified slip for that buyer's transfer, the sell order's
 * completion, or a dispute resolved for the buyer. Until then the PAY it minted to the buyer cannot be cashed out (a
 * sell order reserves at most available PAY less the merchant's unconfirmed fills).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table order_fills add column confirmed_at timestamptz;
    update order_fills f set confirmed_at = coalesce(s.completed_at, s.failed_at, f.created_at)
    from sell_orders s
    where s.id = f.sell_order_id and f.reversed_at is null
      and (s.status = 'completed' or exists (
        select 1 from sell_order_cash_leg_attempts a
        where a.sell_order_id = f.sell_order_id and a.outcome = 'verified'
          and (a.buy_order_id = f.buy_order_id or a.buy_order_id is null)));
    create index order_fills_unconfirmed on order_fills (buy_order_id) where confirmed_at is null and reversed_at is null
  `,
  );
}
