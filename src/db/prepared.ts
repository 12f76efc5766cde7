import { createQueryId, type Compilable, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { declareWrites } from './commit-watch.ts';
import type { Executor } from './database.ts';

/**
 * Hot reads as named prepared statements on PostgreSQL: parsed, analysed and planned once per pooled connection
 * instead of on every call, which saves most of a short read's backend CPU (docs/performance.md).
 *
 * Opt-in by statement text, for a few fixed statements the code registers (at most MAX_PREPARED_STATEMENTS), never
 * every statement: a prepared `select *` would fail ("cached plan must not change result type") after a migration
 * adds a column under a live connection (so a registered statement names its columns), and each one holds memory in
 * every backend. PGlite runs them unprepared.
 */
const MAX_PREPARED_STATEMENTS = 32;
const names = new Map<string, string>();

function register(text: string): void {
  if (names.has(text)) return;
  if (names.size >= MAX_PREPARED_STATEMENTS)
    throw new Error(`more than ${MAX_PREPARED_STATEMENTS} prepared statements: each lives in every pooled connection`);
  names.set(text, `mpay_prepared_${names.size + 1}`);
}

/**
 * The pool's client: a registered statement text runs under its name (pg then sends Parse only the first time on
 * each connection); everything else runs unnamed.
 */
export class PreparingClient extends pg.Client {
  override query(...args: unknown[]): never {
    const [text, values] = args;
    const name = typeof text === 'string' && Array.isArray(values) && args.length === 2 ? names.get(text) : undefined;
    const call = super.query as (...rest: unknown[]) => never;
    const result: unknown = name ? call.call(this, { name, text, values }) : call.apply(this, args);
    // A query the client gave up on (query_timeout: the server stopped answering) leaves the connection mid-protocol:
    // its socket is closed, so the pool drops the connection instead of handing it out again.
    if (result instanceof Promise)
      result.catch((error: unknown) => (error as Error)?.message === 'Query read timeout' && this.#abandon());
    return result as never;
  }

  #abandon(): void {
    (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  }
}

/**
 * A query compiled once and run with new parameter values, prepared on PostgreSQL. `build` writes the query with any
 * values of the right types where the parameters go: they are replaced positionally on each run, so the query holds
 * no other parameters. Also skips building and compiling the query on every call. `writes`: the tables a call of a
 * database function inserts into (the commit watch's listeners hear of them); `notifies`: the statement also sends
 * the outbox's NOTIFY itself (so the commit watch's wake-up sends none for it).
 */
export function preparedQuery<Row, Parameters extends unknown[]>(
  build: (db: Executor) => Compilable<Row>,
  options: { writes?: readonly string[]; notifies?: boolean } = {},
) {
  let compiled: CompiledQuery<Row> | undefined;
  return async (executor: Executor, ...parameters: Parameters): Promise<Row[]> => {
    if (!compiled) {
      const first = build(executor).compile();
      if (first.parameters.length !== parameters.length)
        throw new Error(
          `a prepared query is run with all of its parameters: ${first.parameters.length} in its SQL, ${parameters.length} given`,
        );
      register(first.sql);
      if (options.writes) declareWrites(first.sql, options.writes, { notifies: options.notifies ?? false });
      compiled = first;
    }
    return (await executor.executeQuery<Row>({ ...compiled, queryId: createQueryId(), parameters })).rows;
  };
}
