import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * The buyer's recourse and resolutions that follow the fiat. A dispute records which party opened it (`opened_by`:
 * the sell order's owner, a merchant whose buy order filled it, or the gateway) and that party's merchant, with its
 * optional evidence (its own payment slip). A resolution moves PAY between the parties as the fiat went, never by a
 * mint or burn on one side: `ledger_effect` says which move it made. While a dispute on a sell order is open, the
 * order's cash leg is held (`held_by_dispute_id`): the sweeper does not fail it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table disputes add column opened_by text not null default 'seller' check (opened_by in ('seller', 'buyer', 'gateway'));
    update disputes set opened_by = 'gateway' where kind in ('cash_leg_failure', 'chargeback');
    alter table disputes alter column opened_by drop default;
    alter table disputes add column opened_by_merchant_id uuid references merchants(id);
    update disputes set opened_by_merchant_id = merchant_id where opened_by = 'seller';
    create index disputes_opener on disputes (opened_by_merchant_id, is_sandbox, created_at desc, id desc) where opened_by = 'buyer';
    alter table disputes drop constraint disputes_ledger_effect_check;
    alter table disputes add constraint disputes_ledger_effect_check check (ledger_effect in
      ('mint', 'burn', 'none', 'return_to_seller', 'return_to_buyers', 'complete_cash_leg', 'fail_cash_leg'));

    create table dispute_evidence (
      dispute_id uuid primary key references disputes(id),
      content_type text not null,
      sha256 text not null,
      bytes bytea not null,
      created_at timestamptz not null
    );

    alter table sell_orders add column held_by_dispute_id uuid;
    update sell_orders s set held_by_dispute_id = d.id from disputes d where d.sell_order_id = s.id and d.status <> 'resolved'
  `,
  );
}
