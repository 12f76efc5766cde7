import { GroupCommit } from '../lib/group-commit.ts';
import type { Db } from './database.ts';

/**
 * Reads by key that coalesce: the keys asked for while earlier reads are in flight (or in the same turn of the event
 * loop) go to the database together, in one statement (`where key = any($1)`), and each caller gets its own row
 * (undefined when there is none). A `GroupCommit`, so the failure rule is the batchers' one: a statement that fails
 * as a whole is run again for each key alone, and each caller gets its own answer or error. A key asked for twice in
 * one batch is read once.
 *
 * Reads through the pool only, never inside a transaction (they run on any pooled connection).
 */
export class BatchedRead<Key extends string, Row> {
  readonly #group: GroupCommit<Key, Row | undefined>;

  constructor(
    read: (keys: Key[]) => Promise<Row[]>,
    keyOf: (row: Row) => Key,
    options: { max_batch?: number; max_in_flight?: number } = {},
  ) {
    this.#group = new GroupCommit(
      async (keys) => {
        const rows = await read([...new Set(keys)]);
        const by_key = new Map<Key, Row>();
        for (const row of rows) by_key.set(keyOf(row), row);
        return keys.map((key) => by_key.get(key));
      },
      { max_batch: options.max_batch ?? 256, max_in_flight: options.max_in_flight ?? 2 },
    );
  }

  /** The row with this key, read in the next batch. */
  read(key: Key): Promise<Row | undefined> {
    return this.#group.submit(key);
  }
}

/**
 * One of a thing per database handle (a reader, a batcher), made by `make` on first use: the requests on that handle
 * share it, and a handle that is dropped takes it with it.
 */
export function perDatabase<Thing extends object>(make: (db: Db) => Thing): (db: Db) => Thing {
  const made = new WeakMap<Db, Thing>();
  return (db) => {
    let thing = made.get(db);
    if (!thing) made.set(db, (thing = make(db)));
    return thing;
  };
}
