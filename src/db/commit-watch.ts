import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely';

/**
 * Tells listeners, after the fact, that rows were inserted into a table and committed: the outbox's wake-up for the
 * webhook dispatcher without a NOTIFY inside the business transaction (PostgreSQL serialises the commits of all
 * transactions that queued a NOTIFY behind one database-wide lock held across the WAL flush).
 *
 * The dialect's driver is wrapped: a connection that runs an INSERT into a watched table inside a transaction is
 * marked, and its COMMIT, once it has returned, calls the table's listeners (a rollback forgets the mark; a rollback
 * to a savepoint does not, which is harmless for wake-ups; an insert outside a transaction calls them as soon as it
 * returns). The listeners run after the commit, never inside it. A statement that writes through a database function
 * names its tables once (declareWrites), and counts as an INSERT into each.
 */
export class CommitWatch {
  readonly #listeners = new Map<string, Set<(commit: CommitSeen) => void>>();

  /** Calls `listener` after every commit that inserted into `table`; returns the unsubscribe function. */
  on(table: string, listener: (commit: CommitSeen) => void): () => void {
    let set = this.#listeners.get(table);
    if (!set) this.#listeners.set(table, (set = new Set()));
    set.add(listener);
    return () => void set.delete(listener);
  }

  watches(table: string): boolean {
    return (this.#listeners.get(table)?.size ?? 0) > 0;
  }

  /** `notified`: the tables whose writes in this commit all woke the dispatchers themselves (declareWrites). */
  fire(tables: Iterable<string>, notified: ReadonlySet<string> = NONE): void {
    for (const table of tables)
      for (const listener of this.#listeners.get(table) ?? []) listener({ notified: notified.has(table) });
  }

  wrap(dialect: Dialect): Dialect {
    return {
      createAdapter: () => dialect.createAdapter(),
      createDriver: () => new WatchingDriver(dialect.createDriver(), this),
      createIntrospector: (db) => dialect.createIntrospector(db),
      createQueryCompiler: () => dialect.createQueryCompiler(),
    };
  }
}

/** What a listener hears of a commit. */
export interface CommitSeen {
  /** Every write of the table in this commit came from a statement that sent its own NOTIFY (declareWrites). */
  notified: boolean;
}

const NONE: ReadonlySet<string> = new Set();

/** Statement texts that write tables through a database function, and those tables. */
const FUNCTION_WRITES = new Map<string, readonly string[]>();
/** Of those, the ones that also NOTIFY the outbox channel themselves (delivered at their commit). */
const SELF_NOTIFYING = new Set<string>();

/**
 * Declares that the statement `text` (a call of a database function) inserts into `tables`; `notifies`: it also sends
 * the outbox's NOTIFY itself, which PostgreSQL delivers at its commit (so the listeners need not send another).
 */
export function declareWrites(text: string, tables: readonly string[], options: { notifies?: boolean } = {}): void {
  FUNCTION_WRITES.set(text, tables);
  if (options.notifies) SELF_NOTIFYING.add(text);
}

/** The tables a statement inserts into: an INSERT's, from the compiled query's tree, or a declared call's. */
function insertedTables(query: CompiledQuery): readonly string[] {
  const node = query.query as { kind: string; into?: { table: { identifier: { name: string } } } };
  if (node.kind === 'InsertQueryNode') return node.into ? [node.into.table.identifier.name] : [];
  return FUNCTION_WRITES.get(query.sql) ?? [];
}

class WatchedConnection implements DatabaseConnection {
  readonly inner: DatabaseConnection;
  readonly #watch: CommitWatch;
  in_transaction = false;
  readonly written = new Set<string>();
  /** Tables written in the transaction by statements that did not notify themselves. */
  readonly unnotified = new Set<string>();

  constructor(inner: DatabaseConnection, watch: CommitWatch) {
    this.inner = inner;
    this.#watch = watch;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.inner.executeQuery<R>(query);
    const watched = insertedTables(query).filter((table) => this.#watch.watches(table));
    if (watched.length) {
      const notifies = SELF_NOTIFYING.has(query.sql);
      if (this.in_transaction)
        for (const table of watched) {
          this.written.add(table);
          if (!notifies) this.unnotified.add(table);
        }
      else this.#watch.fire(watched, notifies ? new Set(watched) : NONE);
    }
    return result;
  }

  streamQuery<R>(query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

class WatchingDriver implements Driver {
  readonly #inner: Driver;
  readonly #watch: CommitWatch;

  constructor(inner: Driver, watch: CommitWatch) {
    this.#inner = inner;
    this.#watch = watch;
  }

  init(): Promise<void> {
    return this.#inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new WatchedConnection(await this.#inner.acquireConnection(), this.#watch);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const watched = connection as WatchedConnection;
    await this.#inner.beginTransaction(watched.inner, settings);
    watched.in_transaction = true;
    watched.written.clear();
    watched.unnotified.clear();
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const watched = connection as WatchedConnection;
    try {
      await this.#inner.commitTransaction(watched.inner);
    } finally {
      watched.in_transaction = false;
    }
    const written = [...watched.written];
    const notified = new Set(written.filter((table) => !watched.unnotified.has(table)));
    watched.written.clear();
    watched.unnotified.clear();
    if (written.length) this.#watch.fire(written, notified);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const watched = connection as WatchedConnection;
    watched.written.clear();
    watched.unnotified.clear();
    try {
      await this.#inner.rollbackTransaction(watched.inner);
    } finally {
      watched.in_transaction = false;
    }
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.#inner.savepoint!((connection as WatchedConnection).inner, name, compile);
  }

  async rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.#inner.rollbackToSavepoint!((connection as WatchedConnection).inner, name, compile);
  }

  async releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.#inner.releaseSavepoint!((connection as WatchedConnection).inner, name, compile);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.#inner.releaseConnection((connection as WatchedConnection).inner);
  }

  destroy(): Promise<void> {
    return this.#inner.destroy();
  }
}
