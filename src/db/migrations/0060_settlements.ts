import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table settlements (
      id uuid primary key,
      merchant_id uuid not null references merchants(id),
      is_sandbox boolean not null,
      currency text not null,
      status text not null check (status in ('pending', 'completed', 'failed')),
      -- the fee rate in force when the batch was made, so a later change of SETTLEMENT_FEE_BPS never rewrites history
      fee_bps integer not null check (fee_bps >= 0 and fee_bps <= 10000),
      payment_count integer not null check (payment_count >= 0),
      gross_minor bigint not null check (gross_minor >= 0),
      fee_minor bigint not null check (fee_minor >= 0 and fee_minor <= gross_minor),
      adjustments_minor bigint not null default 0,
      net_minor bigint not null check (net_minor >= 0),
      failure_reason text,
      retry_count integer not null default 0,
      created_at timestamptz not null,
      completed_at timestamptz,
      failed_at timestamptz,
      check (net_minor = gross_minor - fee_minor + adjustments_minor)
    );
    create index settlements_list on settlements (merchant_id, is_sandbox, created_at desc, id desc);

    -- One row per settled payment. The unique payment_id is the database's own guarantee that no payment
    -- ever sits in two batches, whatever the workers do.
    create table settlement_items (
      settlement_id uuid not null references settlements(id),
      payment_id text not null unique references payments(id),
      order_id text not null,
      amount_minor bigint not null check (amount_minor > 0),
      fee_minor bigint not null check (fee_minor >= 0 and fee_minor <= amount_minor),
      net_minor bigint not null check (net_minor = amount_minor - fee_minor),
      payment_created_at timestamptz not null,
      completed_at timestamptz not null,
      primary key (settlement_id, payment_id)
    );
    create index settlement_items_page on settlement_items (settlement_id, payment_created_at desc, payment_id desc);

    create table settlement_adjustments (
      id uuid primary key,
      settlement_id uuid not null references settlements(id),
      amount_minor bigint not null check (amount_minor <> 0),
      reason text not null,
      actor_user_id text not null,
      created_at timestamptz not null
    );
    create index settlement_adjustments_batch on settlement_adjustments (settlement_id, created_at);
  `,
  );
}
