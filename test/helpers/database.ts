import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';

/**
 * A fresh, migrated database for one test file: in-memory PGlite by default; with DATABASE_URL, a new PostgreSQL
 * database created for this run and dropped on close. Nothing depends on what an earlier run left.
 */
export async function openTestDatabase(options: { migrate?: boolean } = {}): Promise<DatabaseHandle & { url?: string }> {
  const server_url = process.env['DATABASE_URL'];
  const migrate = options.migrate ?? true;
  if (!server_url) {
    const handle = await openDatabase({ data_dir: 'memory://' });
    if (migrate) await migrateToLatest(handle.db);
    return handle;
  }
  const name = `mpay_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server_url });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(server_url);
  url.pathname = `/${name}`;
  const handle = await openDatabase({ database_url: url.toString(), data_dir: '' });
  if (migrate) await migrateToLatest(handle.db);
  return {
    ...handle,
    url: url.toString(),
    async close() {
      await handle.close();
      const cleanup = new pg.Client({ connectionString: server_url });
      await cleanup.connect();
      await cleanup.query(`drop database if exists ${name} with (force)`);
      await cleanup.end();
    },
  };
}
