import { sql, type Kysely } from 'kysely';
import { APPEND_ONLY_TABLES } from '../append-only.ts';

/**
 * History nobody can rewrite: every append-only table refuses UPDATE, DELETE and TRUNCATE by a statement-level trigger
 * (so even a statement that touches no row, and TRUNCATE, are refused). The list is data: `append_only_tables` names
 * every guarded table, and the least-privilege grants (src/db/roles.ts) read it, so a later migration adds a table
 * with one line: `select mpay_append_only('<table>')`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table append_only_tables (table_name text primary key, added_at timestamptz not null default now())`.execute(db);
  // Function bodies hold semicolons, so each is sent as one statement of its own.
  await sql.raw(`
    create function mpay_refuse_rewrite() returns trigger language plpgsql as $$
    begin
      raise exception '% is append-only: % refused', tg_table_name, tg_op using errcode = 'raise_exception';
    end
    $$`).execute(db);
  await sql.raw(`
    create function mpay_append_only(target text) returns void language plpgsql as $$
    begin
      if to_regclass(target) is null then
        raise exception 'mpay_append_only: no table %', target;
      end if;
      execute format('drop trigger if exists %I on %I', target || '_append_only_guard', target);
      execute format('create trigger %I before update or delete or truncate on %I for each statement execute function mpay_refuse_rewrite()', target || '_append_only_guard', target);
      insert into append_only_tables (table_name) values (target) on conflict do nothing;
    end
    $$`).execute(db);
  for (const table of APPEND_ONLY_TABLES) {
    // Tables another branch renamed or has not created yet are skipped here; their own migration calls mpay_append_only.
    await sql`select mpay_append_only(${table}) where to_regclass(${table}) is not null`.execute(db);
  }
  await sql`select mpay_append_only('append_only_tables')`.execute(db);
}
