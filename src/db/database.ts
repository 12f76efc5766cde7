import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { Config } from '../config.ts';
import { toSafeNumber } from '../lib/money.ts';
import { CommitWatch } from './commit-watch.ts';
import { PreparingClient } from './prepared.ts';
import { ResilientKysely, resilientDialect } from './resilience.ts';
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
 * Bounds on every PostgreSQL session of the pool (PGlite runs in this process, one statement at a time, and has none):
 * a statement and a lock wait end with an error the API answers 503, and so does a wait for a pooled connection.
 */
export interface DatabaseTimeouts {
  statement_timeout_ms: number;
  lock_timeout_ms: number;
  pool_acquire_timeout_ms: number;
  pool_max: number;
}

export function databaseTimeouts(
  config: Pick<Config, 'db_statement_timeout_ms' | 'db_lock_timeout_ms' | 'db_pool_acquire_timeout_ms' | 'db_pool_max'>,
): DatabaseTimeouts {
  return {
    statement_timeout_ms: config.db_statement_timeout_ms,
    lock_timeout_ms: config.db_lock_timeout_ms,
    pool_acquire_timeout_ms: config.db_pool_acquire_timeout_ms,
    pool_max: config.db_pool_max,
  };
}

/** A server that stops answering (stalled, or gone without closing the socket) is given this much past the statement timeout. */
const STALLED_SERVER_GRACE_MS = 2_000;

/**
 * PostgreSQL when `database_url` is set, else PGlite in `data_dir` (or in memory). `pglite_image`: an in-memory PGlite
 * starts from this data-directory tarball (`dumpDataDir`) instead of running initdb (scratch databases, src/db/scratch.ts).
 * Without `timeouts`, the pool's sessions have none (migrations, the CLI, test databases).
 */
export async function openDatabase(options: {
  database_url?: string | undefined;
  data_dir: string;
  pglite_image?: Blob;
  timeouts?: DatabaseTimeouts | undefined;
}): Promise<DatabaseHandle> {
  if (options.database_url) return openPostgres(options.database_url, options.timeouts);
  return openPglite(options.data_dir, options.pglite_image);
}

function poolOptions(timeouts: DatabaseTimeouts | undefined): pg.PoolConfig {
  if (!timeouts) return { max: 20 };
  return {
    max: timeouts.pool_max,
    statement_timeout: timeouts.statement_timeout_ms,
    lock_timeout: timeouts.lock_timeout_ms,
    // the server enforces the two above; a server that does not answer at all is cut off by the client
    query_timeout: timeouts.statement_timeout_ms + STALLED_SERVER_GRACE_MS,
    connectionTimeoutMillis: timeouts.pool_acquire_timeout_ms,
    keepAlive: true,
  };
}

async function openPostgres(database_url: string, timeouts: DatabaseTimeouts | undefined): Promise<DatabaseHandle> {
  const types = {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === INT8_OID) return parseInt8;
      if (oid === NUMERIC_OID) return (value: string) => value;
      return pg.types.getTypeParser(oid, format);
    },
  };
  // PreparingClient: the few hot reads registered in prepared.ts run as named prepared statements.
  const pool = new pg.Pool({
    connectionString: database_url,
    ...poolOptions(timeouts),
    types: types as never,
    Client: PreparingClient,
  });
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
  const db = new ResilientKysely<Database>({ dialect: commits.wrap(resilientDialect(new PostgresDialect({ pool }))) });
  const listeners = new Set<Listener>();
  return {
    db,
    kind: 'postgres',
    commits,
    logConnectionErrors(next) {
      log = next;
    },
    async listen(channel, on_message) {
      const listener = new Listener(database_url, channel, on_message, (error) => lost(error));
      await listener.start();
      listeners.add(listener);
      return async () => {
        listeners.delete(listener);
        await listener.stop();
      };
    },
    async close() {
      await Promise.all([...listeners].map((listener) => listener.stop()));
      await db.destroy();
    },
  };
}

const LISTEN_RECONNECT_MAX_DELAY_MS = 5_000;

/**
 * One LISTEN connection that reopens itself after the server ends it (a restart, a failover, pg_terminate_backend),
 * backing off to one attempt every few seconds. A notification sent while it was closed is lost, so every reopening
 * delivers one wake-up of its own (the payloads are wake-ups, never data).
 */
class Listener {
  readonly #url: string;
  readonly #channel: string;
  readonly #on_message: (payload: string) => void;
  readonly #on_lost: (error: Error) => void;
  #client: pg.Client | null = null;
  #stopped = false;
  #timer: NodeJS.Timeout | null = null;

  constructor(url: string, channel: string, on_message: (payload: string) => void, on_lost: (error: Error) => void) {
    this.#url = url;
    this.#channel = channel;
    this.#on_message = on_message;
    this.#on_lost = on_lost;
  }

  /** The first connection: its failure is the caller's. */
  async start(): Promise<void> {
    await this.#open();
  }

  async #open(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#url, keepAlive: true });
    let ended = false;
    const closed = (error?: Error) => {
      if (ended) return;
      ended = true;
      if (error) this.#on_lost(error);
      if (this.#client === client) this.#client = null;
      client.end().catch(() => {});
      this.#reopen(0);
    };
    client.on('error', closed);
    client.on('end', () => closed());
    client.on('notification', (message) => {
      if (message.channel === this.#channel) this.#on_message(message.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(this.#channel)}`);
    } catch (error) {
      ended = true;
      await client.end().catch(() => {});
      throw error;
    }
    if (this.#stopped) {
      ended = true;
      await client.end().catch(() => {});
      return;
    }
    this.#client = client;
  }

  #reopen(attempt: number): void {
    if (this.#stopped || this.#timer) return;
    const delay_ms = Math.min(LISTEN_RECONNECT_MAX_DELAY_MS, attempt === 0 ? 50 : 250 * 2 ** attempt);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#open().then(
        () => {
          if (!this.#stopped) this.#on_message('');
        },
        () => this.#reopen(attempt + 1),
      );
    }, delay_ms);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const client = this.#client;
    this.#client = null;
    await client?.end().catch(() => {});
  }
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

/** A SELECT built by the query builder: a connection lost under it is retried once on a fresh one (resilience.ts). */
export async function ping(db: Db): Promise<void> {
  await db.selectNoFrom(sql<number>`1`.as('one')).execute();
}
