import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { toSafeNumber } from '../lib/money.ts';
import { CommitWatch } from './commit-watch.ts';
import { PreparingClient } from './prepared.ts';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;
/** Either the pool or an open transaction: store functions accept both. */
export type Executor = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  kind: 'postgres' | 'pglite';
  /** Subscribes to a NOTIFY channel; resolves to an unsubscribe function. */
  listen(channel: string, on_message: (payload: string) => void): Promise<() => Promise<void>>;
  /** Listeners called after a commit that inserted into a table (see CommitWatch). */
  commits: CommitWatch;
  /**
   * Who is told when a pooled connection fails outside any query (the server ended it: a restart, a dropped
   * database); the pool replaces the connection, and a query in flight reports its own error. The application sets
   * its logger here (a method, not a field: a handle copied with its spread, like a scratch database, still reaches it).
   */
  logConnectionErrors(log: (error: Error) => void): void;
  close(): Promise<void>;
}

/** Until the application sets its logger: one line on stderr. */
function logConnectionError(error: Error): void {
  process.stderr.write(`mpay: database connection lost: ${error.message}\n`);
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/** int8 columns are money in minor units or micro-PAY: exact JS integers, refused past 2^53. */
function parseInt8(value: string): number {
  return toSafeNumber(BigInt(value));
}

/**
 * PostgreSQL when `database_url` is set, else PGlite in `data_dir` (or in memory). `pglite_image`: an in-memory PGlite
 * starts from this data-directory tarball (`dumpDataDir`) instead of running initdb (scratch databases, src/db/scratch.ts).
 */
export async function openDatabase(options: { database_url?: string | undefined; data_dir: string; pglite_image?: Blob }): Promise<DatabaseHandle> {
  if (options.database_url) return openPostgres(options.database_url);
  return openPglite(options.data_dir, options.pglite_image);
}

async function openPostgres(database_url: string): Promise<DatabaseHandle> {
  const types = {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === INT8_OID) return parseInt8;
      if (oid === NUMERIC_OID) return (value: string) => value;
      return pg.types.getTypeParser(oid, format);
    },
  };
  // PreparingClient: the few hot reads registered in prepared.ts run as named prepared statements.
  const pool = new pg.Pool({ connectionString: database_url, max: 20, types: types as never, Client: PreparingClient });
  // An idle client's error reaches the pool's 'error' event; a checked-out client (between the queries of a
  // transaction) emits its own, which with no listener would crash the process: every client gets one for its life.
  let log = logConnectionError;
  // (an idle client's error comes both ways: told once)
  const told = new WeakSet<Error>();
  const lost = (error: Error) => {
    if (told.has(error)) return;
    told.add(error);
    log(error);
  };
  pool.on('error', lost);
  pool.on('connect', (client) => client.on('error', lost));
  const commits = new CommitWatch();
  const db = new Kysely<Database>({ dialect: commits.wrap(new PostgresDialect({ pool })) });
  const listeners: pg.Client[] = [];
  return {
    db,
    kind: 'postgres',
    commits,
    logConnectionErrors(next) {
      log = next;
    },
    async listen(channel, on_message) {
      const client = new pg.Client({ connectionString: database_url });
      client.on('error', lost);
      await client.connect();
      client.on('notification', (message) => {
        if (message.channel === channel) on_message(message.payload ?? '');
      });
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      listeners.push(client);
      return async () => {
        listeners.splice(listeners.indexOf(client), 1);
        await client.end().catch(() => {});
      };
    },
    async close() {
      await Promise.all(listeners.map((client) => client.end().catch(() => {})));
      await db.destroy();
    },
  };
}

async function openPglite(data_dir: string, image?: Blob): Promise<DatabaseHandle> {
  const in_memory = data_dir === 'memory://' || data_dir === ':memory:';
  if (!in_memory) mkdirSync(data_dir, { recursive: true });
  const pglite = new PGlite(in_memory ? 'memory://' : `${data_dir}/pglite`, {
    parsers: { [INT8_OID]: parseInt8, [NUMERIC_OID]: (value: string) => value },
    ...(image && in_memory ? { loadDataDir: image } : {}),
  });
  await pglite.waitReady;
  const commits = new CommitWatch();
  const db = new Kysely<Database>({ dialect: commits.wrap(new PGliteDialect({ pglite })) });
  return {
    db,
    kind: 'pglite',
    commits,
    logConnectionErrors() {
      // in-process: there is no connection to lose
    },
    async listen(channel, on_message) {
      const unlisten = await pglite.listen(channel, on_message);
      return async () => {
        if (!pglite.closed) await unlisten();
      };
    },
    async close() {
      await db.destroy();
    },
  };
}

/** Runs `work` in the caller's transaction when there is one, else in a new one. */
export async function inTransaction<T>(executor: Executor, work: (trx: Trx) => Promise<T>): Promise<T> {
  if (executor.isTransaction) return work(executor as Trx);
  return executor.transaction().execute(work);
}

export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}
