import {
  Kysely,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type IsolationLevel,
  type AccessMode,
  type QueryCompiler,
  type QueryResult,
  type Transaction,
  type TransactionBuilder,
  type TransactionSettings,
} from 'kysely';

/**
 * How the service lives through a database that is slow, stalled or restarting: which errors mean "the database is
 * unavailable" (answered 503, never 500), and one retry of work that cannot have taken effect when the server ended
 * its connection (a read outside a transaction; a transaction that never reached COMMIT).
 */

/** The server ended the connection (pg_terminate_backend, a restart, a failover) or the socket broke. */
const CONNECTION_LOST_SQLSTATES = new Set(['57P01', '57P02', '57P03']);
const CONNECTION_LOST_ERRNOS = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);
const CONNECTION_LOST_MESSAGES = [
  'Connection terminated unexpectedly',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
];

/** Also unavailable: timeouts (statement, lock, pooled-connection wait, a stalled server) and refused connections. */
const UNAVAILABLE_SQLSTATES = new Set(['57014', '55P03', '53300', '53400', '25P03']);
const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const UNAVAILABLE_MESSAGES = [
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
  'Query read timeout',
  'Cannot use a pool after calling end',
];

function fields(error: unknown): { code: string; message: string } {
  if (typeof error !== 'object' || error === null) return { code: '', message: '' };
  const record = error as { code?: unknown; message?: unknown };
  return {
    code: typeof record.code === 'string' ? record.code : '',
    message: typeof record.message === 'string' ? record.message : '',
  };
}

export function isConnectionLost(error: unknown): boolean {
  const { code, message } = fields(error);
  return (
    CONNECTION_LOST_SQLSTATES.has(code) ||
    CONNECTION_LOST_ERRNOS.has(code) ||
    CONNECTION_LOST_MESSAGES.some((text) => message.startsWith(text))
  );
}

/** The database cannot serve now: a client should retry shortly (503 with Retry-After). */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (isConnectionLost(error)) return true;
  const { code, message } = fields(error);
  // class 08: connection exceptions
  return (
    UNAVAILABLE_SQLSTATES.has(code) ||
    code.startsWith('08') ||
    UNAVAILABLE_ERRNOS.has(code) ||
    UNAVAILABLE_MESSAGES.some((text) => message.startsWith(text))
  );
}

/** Unavailable for a while (a timeout, a refused connection), not just one lost connection: retrying now won't help. */
export function isDatabaseTooSlow(error: unknown): boolean {
  return isDatabaseUnavailable(error) && !isConnectionLost(error);
}

/** Errors of a transaction whose connection was lost before its COMMIT was sent: nothing of it can have committed. */
const lost_before_commit = new WeakSet<object>();

function markLostBeforeCommit(error: unknown): void {
  if (typeof error === 'object' && error !== null && isConnectionLost(error)) lost_before_commit.add(error);
}

/** A statement the query builder built as a SELECT: running it again changes nothing. */
function isRead(query: CompiledQuery): boolean {
  return query.query.kind === 'SelectQueryNode';
}

class ResilientConnection implements DatabaseConnection {
  readonly inner: DatabaseConnection;
  readonly #driver: Driver;
  in_transaction = false;

  constructor(inner: DatabaseConnection, driver: Driver) {
    this.inner = inner;
    this.#driver = driver;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.inner.executeQuery<R>(query);
    } catch (error) {
      if (this.in_transaction) {
        markLostBeforeCommit(error);
        throw error;
      }
      if (!isConnectionLost(error) || !isRead(query)) throw error;
      // this connection is dead (the pool drops it on release): the read once more on a fresh one
      const fresh = await this.#driver.acquireConnection();
      try {
        return await fresh.executeQuery<R>(query);
      } finally {
        await this.#driver.releaseConnection(fresh);
      }
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

class ResilientDriver implements Driver {
  readonly #inner: Driver;

  constructor(inner: Driver) {
    this.#inner = inner;
  }

  init(): Promise<void> {
    return this.#inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new ResilientConnection(await this.#inner.acquireConnection(), this.#inner);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const resilient = connection as ResilientConnection;
    try {
      await this.#inner.beginTransaction(resilient.inner, settings);
    } catch (error) {
      markLostBeforeCommit(error);
      throw error;
    }
    resilient.in_transaction = true;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const resilient = connection as ResilientConnection;
    // From here the outcome of a lost connection is unknown: never retried.
    resilient.in_transaction = false;
    await this.#inner.commitTransaction(resilient.inner);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const resilient = connection as ResilientConnection;
    resilient.in_transaction = false;
    try {
      await this.#inner.rollbackTransaction(resilient.inner);
    } catch (error) {
      // A dead connection has nothing to roll back (the server did it): the transaction's own error is the one to report.
      if (!isDatabaseUnavailable(error)) throw error;
    }
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.#inner.savepoint!((connection as ResilientConnection).inner, name, compile);
  }

  async rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.#inner.rollbackToSavepoint!((connection as ResilientConnection).inner, name, compile);
  }

  async releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.#inner.releaseSavepoint!((connection as ResilientConnection).inner, name, compile);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.#inner.releaseConnection((connection as ResilientConnection).inner);
  }

  destroy(): Promise<void> {
    return this.#inner.destroy();
  }
}

/** A dialect whose reads outside transactions are retried once on a fresh connection when theirs was lost. */
export function resilientDialect(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new ResilientDriver(dialect.createDriver()),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
  };
}

/** Runs a transaction again, once, when its connection was lost before COMMIT (see resilientDialect). */
class RetryingTransactionBuilder<DB> {
  readonly #inner: TransactionBuilder<DB>;

  constructor(inner: TransactionBuilder<DB>) {
    this.#inner = inner;
  }

  setAccessMode(mode: AccessMode): RetryingTransactionBuilder<DB> {
    return new RetryingTransactionBuilder(this.#inner.setAccessMode(mode));
  }

  setIsolationLevel(level: IsolationLevel): RetryingTransactionBuilder<DB> {
    return new RetryingTransactionBuilder(this.#inner.setIsolationLevel(level));
  }

  async execute<T>(callback: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    try {
      return await this.#inner.execute(callback);
    } catch (error) {
      if (typeof error !== 'object' || error === null || !lost_before_commit.has(error)) throw error;
      return this.#inner.execute(callback);
    }
  }
}

/** The pool's Kysely: its transactions are retried once when the server ended their connection before COMMIT. */
export class ResilientKysely<DB> extends Kysely<DB> {
  override transaction(): TransactionBuilder<DB> {
    return new RetryingTransactionBuilder(super.transaction()) as unknown as TransactionBuilder<DB>;
  }
}
