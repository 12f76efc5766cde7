import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Dashboard sessions carry a mode like merchant JWTs (live by default), and a merchant's JWTs and sessions issued
 * before `tokens_not_before` are refused: revoking a merchant's tokens sets it to now.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table merchant_sessions add column is_sandbox boolean not null default false;
    alter table merchants add column tokens_not_before timestamptz;
  `,
  );
}
