import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * A pending-funds row whose intake validation was `unverified` or `timeout` is validated again in the
 * background with backoff. The receipt bytes are kept at intake (one row per pending-funds row), and the row counts
 * its intake validator calls and knows when the next one is due (null: none is, the row waits for its TTL).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table pending_funds_receipts (
      pending_funds_id uuid primary key references pending_funds(id),
      data bytea not null,
      content_type text not null,
      sha256 text not null,
      created_at timestamptz not null
    );
    alter table pending_funds add column intake_attempts integer not null default 0 check (intake_attempts >= 0);
    alter table pending_funds add column intake_next_attempt_at timestamptz;
    alter table pending_funds add column intake_claimed_until timestamptz;
    create index pending_funds_intake_due on pending_funds (intake_next_attempt_at) where status = 'pending_validation' and intake_next_attempt_at is not null;
  `,
  );
}
