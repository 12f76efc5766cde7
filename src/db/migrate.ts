import { readdir } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { sql, type Kysely } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import type { Db } from './database.ts';
import { applySqlFiles, splitStatements } from './repeatable.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/**
 * Forward-only migrations: every `src/db/migrations/NNNN_name.ts` exports `up(db)`, applied in name order; they change
 * tables. Kysely's migrator runs them in one transaction under a Postgres advisory lock, so two processes starting
 * together do not race. Functions and triggers follow them (src/db/repeatable.ts).
 */
class DirectoryProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await readdir(MIGRATIONS_DIR)).filter((name) => /^\d{4}_[\w-]+\.ts$/.test(name)).sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      const module = (await import(pathToFileURL(`${MIGRATIONS_DIR}${file}`).href)) as Migration;
      migrations[file.replace(/\.ts$/, '')] = { up: module.up };
    }
    return migrations;
  }
}

/** Applies the pending migrations, then the changed SQL files; returns their names. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: new DirectoryProvider(),
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  const migrations = (results ?? [])
    .filter((result) => result.status === 'Success')
    .map((result) => result.migrationName);
  return [...migrations, ...(await applySqlFiles(db))];
}

/** Runs a block of DDL one statement at a time (PGlite's extended protocol takes one command per query). */
export async function runStatements(db: Kysely<unknown>, ddl: string): Promise<void> {
  for (const statement of splitStatements(ddl)) await sql.raw(statement).execute(db);
}

/**
 * Applies migrations up to and including `name`, without the SQL files (tests of a data migration start from the
 * schema before it).
 */
export async function migrateTo(db: Db, name: string): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: new DirectoryProvider(),
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
  });
  const { error } = await migrator.migrateTo(name);
  if (error) throw error instanceof Error ? error : new Error(String(error));
}
