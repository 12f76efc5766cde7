import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import type { DatabaseHandle } from '../../src/db/database.ts';
import { openTestDatabase } from '../helpers/database.ts';

const DATABASE_URL = process.env['DATABASE_URL'];
const POSTGRES_ONLY = DATABASE_URL ? false : 'PostgreSQL only (set DATABASE_URL): PGlite has no connection to lose';

/**
 * The bench's scale run dropped its database under an api process, which then died of an unhandled 'error' event
 * from a pooled client: the service must outlive a server that ends its connections.
 */
describe('a database connection the server ends', { skip: POSTGRES_ONLY }, () => {
  let database: DatabaseHandle;
  let admin: pg.Client;
  const lost: string[] = [];

  before(async () => {
    // a scratch database: its handle is a copy of the pool's (the logger must still reach the pool)
    database = await openTestDatabase({ migrate: false });
    database.logConnectionErrors((error) => lost.push(error.message));
    admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
  });
  after(async () => {
    await database.close();
    await admin.end();
  });

  const backendPid = async (executor: DatabaseHandle['db']) => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(executor)).rows[0]!.pid;
  const terminate = async (pid: number) => {
    await admin.query('select pg_terminate_backend($1::int)', [pid]);
    // the client learns of it from the socket: wait until the pool has been told
    for (let waited = 0; waited < 2000 && !lost.length; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
  };

  it('between the queries of a transaction: that transaction fails, the process lives, the pool serves again', async () => {
    lost.length = 0;
    await assert.rejects(
      database.db.transaction().execute(async (trx) => {
        await terminate(await backendPid(trx));
        await sql`select 1`.execute(trx);
      }),
    );
    assert.ok(lost.length >= 1, 'the loss is logged');
    assert.deepEqual((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows, [{ one: 1 }]);
  });

  it('while idle in the pool: reported once, and the pool serves again', async () => {
    lost.length = 0;
    await terminate(await backendPid(database.db));
    assert.equal(lost.length, 1);
    assert.deepEqual((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows, [{ one: 1 }]);
  });
});
