import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * The cash-leg retry budget is per fill: `cash_leg_retries_used` is the number of refused slips of the fill with the
 * most of them among the fills not yet confirmed paid (the order's own on an order without fills). A confirmed fill
 * spends nothing, so an order filled by many buyers can be confirmed fill by fill whatever their number.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table sell_orders add column cash_leg_retries_used integer not null default 0;
    update sell_orders s set cash_leg_retries_used = coalesce((
      select max(refused.n) from (
        select count(*) as n from sell_order_cash_leg_attempts a
        where a.sell_order_id = s.id and a.outcome <> 'verified'
          and not exists (
            select 1 from sell_order_cash_leg_attempts v
            where v.sell_order_id = s.id and v.outcome = 'verified' and v.buy_order_id is not distinct from a.buy_order_id)
        group by a.buy_order_id) refused), 0)
    where s.cash_leg_attempts > 0;
  `,
  );
}
