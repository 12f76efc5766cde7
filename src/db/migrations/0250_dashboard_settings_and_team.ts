import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * The dashboard's per-merchant settings (the time zone its pages show times in), and people removed from a merchant:
 * a removed user keeps its row (sessions and the audit trail point at it) but can no longer sign in.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table dashboard_settings (
      merchant_id uuid primary key references merchants(id),
      time_zone text not null,
      updated_at timestamptz not null
    );
    alter table merchant_users add column removed_at timestamptz;
  `,
  );
}
