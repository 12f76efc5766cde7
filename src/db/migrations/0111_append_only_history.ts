import { sql, type Kysely } from 'kysely';
import { APPEND_ONLY_TABLES } from '../append-only.ts';
import { applySqlFiles } from '../repeatable.ts';

/**
 * History nobody can rewrite: every append-only table refuses UPDATE, DELETE and TRUNCATE by a statement-level trigger
 * (so even a statement that touches no row, and TRUNCATE, are refused). The list is data: `append_only_tables` names
 * every guarded table, and the least-privilege grants (src/db/roles.ts) read it, so a later migration adds a table
 * with one line: `select mpay_append_only('<table>')`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table append_only_tables (table_name text primary key, added_at timestamptz not null default now())`.execute(
    db,
  );
  await applySqlFiles(db, ['db/sql/mpay_refuse_rewrite.sql', 'db/sql/mpay_append_only.sql']);
  for (const table of APPEND_ONLY_TABLES) {
    // Tables another branch renamed or has not created yet are skipped here; their own migration calls mpay_append_only.
    await sql`select mpay_append_only(${table}) where to_regclass(${table}) is not null`.execute(db);
  }
  await sql`select mpay_append_only('append_only_tables')`.execute(db);
}
