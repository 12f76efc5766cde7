import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import type { Executor } from '../../src/db/database.ts';
import { preparedQuery } from '../../src/db/prepared.ts';
import type { ScratchDatabase } from '../../src/db/scratch.ts';
import { openTestDatabase } from '../helpers/database.ts';

const ON_POSTGRES = Boolean(process.env['DATABASE_URL']);

/** A table of the test's own: prepared statements are opt-in by text, whatever the table. */
const probe = preparedQuery<{ id: string; label: string }, [id: string]>((db) =>
  (db as unknown as Kysely<{ prepared_probe: { id: string; label: string } }>)
    .selectFrom('prepared_probe')
    .select(['id', 'label'])
    .where('id', '=', 'placeholder'),
);

describe('prepared hot reads (db/prepared.ts)', () => {
  let database: ScratchDatabase;

  before(async () => {
    database = await openTestDatabase();
    await sql`create table prepared_probe (id text primary key, label text not null)`.execute(database.db);
    await sql`insert into prepared_probe values ('a', 'first'), ('b', 'second')`.execute(database.db);
  });
  after(() => database.close());

  it("runs the compiled query with each call's parameters, on the pool and in a transaction", async () => {
    assert.deepEqual(await probe(database.db, 'a'), [{ id: 'a', label: 'first' }]);
    assert.deepEqual(await probe(database.db, 'b'), [{ id: 'b', label: 'second' }]);
    assert.deepEqual(await probe(database.db, 'missing'), []);
    const in_transaction = await database.db.transaction().execute((trx) => probe(trx as Executor, 'b'));
    assert.deepEqual(in_transaction, [{ id: 'b', label: 'second' }]);
  });

  it('refuses a call with another number of parameters than the query holds', async () => {
    const two = preparedQuery<{ id: string }, [id: string]>((db) =>
      (db as unknown as Kysely<{ prepared_probe: { id: string; label: string } }>)
        .selectFrom('prepared_probe')
        .select('id')
        .where('id', '=', 'x')
        .where('label', '=', 'y'),
    );
    await assert.rejects(two(database.db, 'a'), /2 in its SQL, 1 given/);
  });

  it('prepares the registered statement in the session, and nothing else', {
    skip: !ON_POSTGRES && 'PostgreSQL only: PGlite runs it unprepared',
  }, async () => {
    const names = await database.db.transaction().execute(async (trx) => {
      await probe(trx as Executor, 'a');
      await probe(trx as Executor, 'b');
      await sql`select label from prepared_probe where id = ${'a'}`.execute(trx);
      return (
        await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(trx)
      ).rows;
    });
    assert.equal(names.length, 1, JSON.stringify(names));
    assert.match(names[0]!.name, /^mpay_prepared_\d+$/);
    assert.match(names[0]!.statement, /from "prepared_probe"/);
  });
});
