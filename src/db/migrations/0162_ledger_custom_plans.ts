import { sql, type Kysely } from 'kysely';

/**
 * The set-based ledger path plans its statements for each call's own values. A PL/pgSQL function may switch to a cached
 * generic plan after five calls on a connection, planned from what the tables held then: once lone transfers (grouped,
 * so they call this function) had warmed it up on an almost empty journal, transferBatch x100 fell from about 26,000 to
 * 4,500 transfers/s on the same run; with custom plans it stays at the former.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(`alter function ledger_apply_all(jsonb, timestamptz) set plan_cache_mode = force_custom_plan`).execute(db);
}
