import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * PAY a merchant owes: a move that had to take PAY back from its available account (a fill reversal, a dispute's
 * resolution) found part of it already spent. The part it could not take is a shortfall owed to the account the move
 * was for (the mint source for a reversal, the other party for a dispute), collected from the debtor's next credits
 * before they become available; each collection is a ledger posting of its own. Reversal shortfalls recorded on fills
 * before this table existed are carried over as owed to the fill's mint source.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table pay_shortfalls (
      id uuid primary key,
      origin_key text not null unique,
      debtor_account text not null,
      creditor_account text not null,
      amount_micro_pay bigint not null check (amount_micro_pay > 0),
      collected_micro_pay bigint not null default 0 check (collected_micro_pay >= 0 and collected_micro_pay <= amount_micro_pay),
      memo text,
      created_at timestamptz not null
    );
    create index pay_shortfalls_outstanding on pay_shortfalls (debtor_account, created_at, id) where collected_micro_pay < amount_micro_pay;
    create table pay_shortfall_collections (
      key text primary key,
      shortfall_id uuid not null references pay_shortfalls(id),
      amount_micro_pay bigint not null check (amount_micro_pay > 0),
      credit_key text not null,
      created_at timestamptz not null
    );
    create index pay_shortfall_collections_shortfall on pay_shortfall_collections (shortfall_id);

    insert into pay_shortfalls (id, origin_key, debtor_account, creditor_account, amount_micro_pay, memo, created_at)
    select gen_random_uuid(), 'buy_order:' || f.buy_order_id || ':fill:' || f.sell_order_id || ':reversal',
      (case when f.is_sandbox then 'sandbox' else 'live' end) || ':merchant:' || b.merchant_id || ':available',
      coalesce(s.mint_source_account, (case when f.is_sandbox then 'sandbox' else 'live' end) || ':issuance:world'),
      f.shortfall_micro_pay, 'fill reversal: spent before it was taken back', coalesce(f.reversed_at, f.created_at)
    from order_fills f join buy_orders b on b.id = f.buy_order_id join sell_orders s on s.id = f.sell_order_id
    where f.shortfall_micro_pay > 0
  `,
  );
}
