import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { ScratchDatabase } from '../../src/db/scratch.ts';
import { runInOneRoundTrip } from '../../src/db/simple-query.ts';
import { openTestDatabase } from '../helpers/database.ts';

const POSTGRES_ONLY = process.env['DATABASE_URL'] ? false : 'PostgreSQL only (set DATABASE_URL): PGlite takes one statement per query';

/** The batched payment create's round trip on PostgreSQL: its parameters inlined, its statements one transaction. */
describe('runInOneRoundTrip', { skip: POSTGRES_ONLY }, () => {
  let database: ScratchDatabase;

  before(async () => {
    database = await openTestDatabase();
    await sql`create table round_trip_values (position integer primary key, value text not null, amount bigint, flag boolean)`.execute(database.db);
  });
  after(() => database.close());

  it('inlines every string as it was, quotes, backslashes, dollars and JSON included', async () => {
    const values = [`it's`, `back\\slash \\' \\\\`, `E'x'`, '$1 $$ $body$', JSON.stringify({ q: `"'\\n`, u: 'ไทย 💸' }), `'); drop table round_trip_values; --`];
    await runInOneRoundTrip(
      database.db,
      values.map((value, position) => sql`insert into round_trip_values (position, value, amount, flag) values (${position}, ${value}, ${(position + 1) * -1000}, ${position % 2 === 0})`),
    );
    const rows = await sql<{ value: string; amount: number; flag: boolean }>`select value, amount, flag from round_trip_values order by position`.execute(database.db);
    assert.deepEqual(rows.rows, values.map((value, position) => ({ value, amount: (position + 1) * -1000, flag: position % 2 === 0 })));
  });

  it('is one transaction: a statement that fails takes the ones before it back', async () => {
    await assert.rejects(
      runInOneRoundTrip(database.db, [sql`insert into round_trip_values (position, value) values (100, 'kept?')`, sql`select mpay_refuse('the second statement refuses')`]),
      /refused: the second statement refuses/,
    );
    const rows = await sql`select 1 from round_trip_values where position = 100`.execute(database.db);
    assert.equal(rows.rows.length, 0);
  });
});
