import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/** What the balance view needs beside ledger balances: the recalculated buffer threshold and when a deficit began. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table merchant_balance_state (
      merchant_id uuid not null references merchants(id),
      is_sandbox boolean not null,
      buffer_threshold_micro_pay bigint not null default 0 check (buffer_threshold_micro_pay >= 0),
      trailing_30d_volume_micro_pay bigint not null default 0 check (trailing_30d_volume_micro_pay >= 0),
      buffer_last_recalc_at timestamptz,
      deficit_since timestamptz,
      primary key (merchant_id, is_sandbox)
    );
  `,
  );
}
