import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * A fill whose sell order's cash leg fails is reversed: the PAY minted to the buyer is burned back to the mint source
 * as far as the buyer still holds it (`reversed_micro_pay`), and what the buyer had already spent is its shortfall,
 * shown as the buyer's deficit in the balance view. Null `reversed_at`: the fill stands.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table order_fills add column reversed_at timestamptz;
    alter table order_fills add column reversed_micro_pay bigint not null default 0 check (reversed_micro_pay >= 0);
    alter table order_fills add column shortfall_micro_pay bigint not null default 0 check (shortfall_micro_pay >= 0);
    alter table order_fills add constraint order_fills_reversal_adds_up
      check (reversed_at is null and reversed_micro_pay = 0 and shortfall_micro_pay = 0
        or reversed_at is not null and reversed_micro_pay + shortfall_micro_pay = amount_micro_pay);
    create index order_fills_shortfall on order_fills (buy_order_id) where shortfall_micro_pay > 0
  `,
  );
}
