/**
 * Scratch databases for the test suite and the benchmark: each caller gets a database of its own, migrated to the
 * latest schema, that nothing else uses and that is gone after `close()`.
 *
 * - PGlite (no `server_url`): an in-memory instance. Running initdb and every migration costs seconds of CPU per
 *   instance, so with `template` the migrated data directory is built once per machine and schema, kept as a tarball
 *   in the temp directory (named by a hash of the migrations and what they read), and each instance starts from it.
 * - PostgreSQL (`server_url`, a URL whose database is the maintenance one): a new database `<prefix>_<random>`,
 *   dropped on close. With `template` it is created from `mpay_tpl_<hash>`, a migrated template database built once
 *   per server and schema.
 *
 * Both caches are built under a lock (a lock file; a PostgreSQL advisory lock) and published atomically (rename), so
 * test files starting together build them once and never see a half-built one.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect } from 'kysely';
import pg from 'pg';
import { openDatabase, type DatabaseHandle, type DatabaseTimeouts, type Db } from './database.ts';
import { migrateToLatest } from './migrate.ts';
import { sqlFiles } from './repeatable.ts';
import type { Database } from './schema.ts';

export interface ScratchDatabase extends DatabaseHandle {
  /** PostgreSQL: the scratch database's URL (other processes connect to it). */
  url?: string;
}

export interface ScratchOptions {
  /** PostgreSQL server (its maintenance database); PGlite in memory when absent. */
  server_url?: string | undefined;
  /** Name prefix of the PostgreSQL database. */
  prefix: string;
  /** Migrate to the latest schema (default true). `false`: an empty database (data-migration tests migrate it themselves). */
  migrate?: boolean;
  /** Start from the cached migrated image / template database (default true); `false` migrates this database itself. */
  template?: boolean;
  /** PostgreSQL: the service's statement, lock and pool timeouts on this handle (none by default). */
  timeouts?: DatabaseTimeouts;
}

export async function openScratchDatabase(options: ScratchOptions): Promise<ScratchDatabase> {
  const migrate = options.migrate ?? true;
  const template = options.template ?? true;
  if (!options.server_url) {
    if (!template) {
      const handle = await openDatabase({ data_dir: 'memory://' });
      if (migrate) await migrateToLatest(handle.db);
      return handle;
    }
    return openDatabase({ data_dir: 'memory://', pglite_image: await pgliteImage(migrate) });
  }
  const server_url = options.server_url;
  const name = `${options.prefix}_${randomBytes(4).toString('hex')}`;
  const from = migrate && template ? await templateDatabase(server_url) : undefined;
  await adminQuery(server_url, `create database ${name}${from ? ` template ${from}` : ''}`);
  const url = databaseUrl(server_url, name);
  const handle = await openDatabase({ database_url: url, data_dir: '', timeouts: options.timeouts });
  if (migrate && !from) await migrateToLatest(handle.db);
  return {
    ...handle,
    url,
    async close() {
      await handle.close();
      await adminQuery(server_url, `drop database if exists ${name} with (force)`);
    },
  };
}

/**
 * What the migrated schema depends on: the migrations, the files they import or read, the functions' SQL files and the
 * PGlite version.
 */
export function schemaHash(): string {
  const hash = createHash('sha256');
  const db_dir = fileURLToPath(new URL('./', import.meta.url));
  const migrations_dir = join(db_dir, 'migrations');
  const files = [
    ...readdirSync(migrations_dir)
      .sort()
      .map((name) => join(migrations_dir, name)),
    ...readdirSync(db_dir)
      .filter((name) => name.endsWith('.ts'))
      .sort()
      .map((name) => join(db_dir, name)),
    fileURLToPath(new URL('../modules/reference/thai-banks.csv', import.meta.url)),
    ...sqlFiles().map((name) => fileURLToPath(new URL(`../${name}`, import.meta.url))),
  ];
  for (const file of files) {
    if (!statSync(file).isFile()) continue;
    hash.update(file.slice(db_dir.length)).update('\0').update(readFileSync(file)).update('\0');
  }
  hash.update(pgliteVersion());
  return hash.digest('hex').slice(0, 16);
}

function pgliteVersion(): string {
  // The package exports no ./package.json; it sits next to dist/, where the entry point is.
  const entry = fileURLToPath(import.meta.resolve('@electric-sql/pglite'));
  return (JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as { version: string }).version;
}

// ---- PGlite: a data-directory tarball per schema, cached on disk and per process ----

const images = new Map<boolean, Promise<Blob>>();

function pgliteImage(migrated: boolean): Promise<Blob> {
  let image = images.get(migrated);
  if (!image) {
    image = loadOrBuildImage(migrated);
    images.set(migrated, image);
    image.catch(() => images.delete(migrated));
  }
  return image;
}

const LOCK_STALE_MS = 120_000;

async function loadOrBuildImage(migrated: boolean): Promise<Blob> {
  const dir = tmpdir();
  const file = join(dir, `mpay-pglite-${migrated ? schemaHash() : `empty-${pgliteVersion()}`}.tar`);
  const lock = `${file}.lock`;
  for (;;) {
    const cached = await readFile(file).catch(() => undefined);
    if (cached) return new Blob([cached]);
    let fd: number;
    try {
      fd = openSync(lock, 'wx');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return buildImage(migrated); // temp dir unusable: no cache
      // Another process is building it; a lock left by a crashed process is taken over.
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > LOCK_STALE_MS) unlinkSync(lock);
      else await sleep(100);
      continue;
    }
    try {
      const image = await buildImage(migrated);
      const partial = `${file}.${process.pid}.partial`;
      writeFileSync(partial, new Uint8Array(await image.arrayBuffer()));
      renameSync(partial, file);
      if (migrated) pruneImages(dir, file);
      return image;
    } finally {
      closeSync(fd);
      unlinkSync(lock);
    }
  }
}

const STALE_IMAGE_MS = 3_600_000;

/**
 * Each schema change builds a new image (about 40 MB); the images of other schemas untouched for an hour are deleted
 * when a new one is published. A run of another schema that still wants one builds it again; one reading it keeps its
 * open file.
 */
export function pruneImages(dir: string, current: string): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (!/^mpay-pglite-[0-9a-f]{16}\.tar$/.test(name) || path === current) continue;
    const modified = statSync(path, { throwIfNoEntry: false })?.mtimeMs;
    if (modified === undefined || Date.now() - modified <= STALE_IMAGE_MS) continue;
    try {
      unlinkSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // another process pruned it first
    }
  }
}

async function buildImage(migrated: boolean): Promise<Blob> {
  const pglite = new PGlite('memory://');
  await pglite.waitReady;
  try {
    if (migrated) {
      const db: Db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
      await migrateToLatest(db);
    }
    return await pglite.dumpDataDir('none');
  } finally {
    await pglite.close();
  }
}

// ---- PostgreSQL: a migrated template database per schema ----

/** `mpay_tpl_<hash>`, built if missing; concurrent callers wait on an advisory lock while one builds it. */
async function templateDatabase(server_url: string): Promise<string> {
  const name = `mpay_tpl_${schemaHash()}`;
  const admin = new pg.Client({ connectionString: server_url });
  await admin.connect();
  try {
    await admin.query(`select pg_advisory_lock(hashtext('mpay_scratch_template'))`);
    const exists = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (exists.rowCount === 0) {
      // Built under another name and renamed when complete: a crash mid-way leaves no half-migrated template.
      const building = `${name}_build_${randomBytes(3).toString('hex')}`;
      await admin.query(`create database ${building}`);
      try {
        const handle = await openDatabase({ database_url: databaseUrl(server_url, building), data_dir: '' });
        try {
          await migrateToLatest(handle.db);
        } finally {
          await handle.close();
        }
        await admin.query(`alter database ${building} rename to ${name}`);
      } catch (error) {
        await admin.query(`drop database if exists ${building} with (force)`);
        throw error;
      }
    }
  } finally {
    await admin.end(); // ends the session and with it the advisory lock
  }
  return name;
}

function databaseUrl(server_url: string, name: string): string {
  const url = new URL(server_url);
  url.pathname = `/${name}`;
  return url.toString();
}

async function adminQuery(server_url: string, statement: string): Promise<void> {
  const admin = new pg.Client({ connectionString: server_url });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}
