import { sql } from 'kysely';
import type { Config } from '../config.ts';
import { openDatabase, type Db, type DatabaseHandle } from './database.ts';
import { migrateToLatest } from './migrate.ts';

/** Bookkeeping the service reads and never writes. */
const READ_ONLY_TABLES = new Set([
  'schema_migrations',
  'schema_migrations_lock',
  'schema_sql_files',
  'append_only_tables',
]);

export interface GrantReport {
  role: string;
  tables: number;
  append_only: string[];
}

/**
 * Least privilege for the running service on PostgreSQL, applied by the owner after every migration run so that
 * tables added later are covered: SELECT/INSERT/UPDATE/DELETE on ordinary tables, SELECT/INSERT only on the tables
 * listed in `append_only_tables`, SELECT on migration bookkeeping, never TRUNCATE, and no ownership (so it cannot
 * drop or disable the triggers either).
 */
export async function grantServiceRole(owner: Db, role: string): Promise<GrantReport> {
  const schema =
    (await sql<{ schema: string }>`select current_schema() as schema`.execute(owner)).rows[0]?.schema ?? 'public';
  const tables = (
    await sql<{
      name: string;
    }>`select tablename as name from pg_tables where schemaname = current_schema() order by tablename`.execute(owner)
  ).rows.map((row) => row.name);
  const append_only = new Set(
    (await sql<{ table_name: string }>`select table_name from append_only_tables`.execute(owner)).rows.map(
      (row) => row.table_name,
    ),
  );
  const grantee = sql.id(role);
  await owner.transaction().execute(async (trx) => {
    await sql`grant usage on schema ${sql.id(schema)} to ${grantee}`.execute(trx);
    for (const name of tables) {
      const table = sql.id(schema, name);
      await sql`revoke all on table ${table} from ${grantee}`.execute(trx);
      if (READ_ONLY_TABLES.has(name)) await sql`grant select on table ${table} to ${grantee}`.execute(trx);
      else if (append_only.has(name)) await sql`grant select, insert on table ${table} to ${grantee}`.execute(trx);
      else await sql`grant select, insert, update, delete on table ${table} to ${grantee}`.execute(trx);
    }
    await sql`grant usage, select on all sequences in schema ${sql.id(schema)} to ${grantee}`.execute(trx);
  });
  return { role, tables: tables.length, append_only: [...append_only].sort() };
}

/**
 * Migrations run as the tables' owner (DATABASE_OWNER_URL, else DATABASE_URL; the same handle on PGlite). When the
 * service connects as another role, the owner then grants that role what it needs and no more.
 */
export async function migrateAsOwner(
  config: Pick<Config, 'database_url' | 'database_owner_url' | 'data_dir'>,
  service: DatabaseHandle,
): Promise<{ applied: string[]; grants?: GrantReport }> {
  if (service.kind !== 'postgres' || !config.database_owner_url || config.database_owner_url === config.database_url) {
    return { applied: await migrateToLatest(service.db) };
  }
  const owner = await openDatabase({ database_url: config.database_owner_url, data_dir: config.data_dir });
  try {
    const applied = await migrateToLatest(owner.db);
    const service_role = (await sql<{ role: string }>`select current_user as role`.execute(service.db)).rows[0]?.role;
    const owner_role = (await sql<{ role: string }>`select current_user as role`.execute(owner.db)).rows[0]?.role;
    if (!service_role || service_role === owner_role) return { applied };
    return { applied, grants: await grantServiceRole(owner.db, service_role) };
  } finally {
    await owner.close();
  }
}
