import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import type { DatabaseHandle } from '../../src/db/database.ts';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { openDatabase } from '../../src/db/database.ts';
import { present } from '../../src/lib/assert.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
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

  const backendPid = async (executor: DatabaseHandle['db']) =>
    (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(executor)).rows[0]!.pid;
  const terminate = async (pid: number) => {
    await admin.query('select pg_terminate_backend($1::int)', [pid]);
    // the client learns of it from the socket: wait until the pool has been told
    for (let waited = 0; waited < 2000 && !lost.length; waited += 10)
      await new Promise((resolve) => setTimeout(resolve, 10));
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

const TIMEOUTS = { statement_timeout_ms: 3_000, lock_timeout_ms: 1_000, pool_acquire_timeout_ms: 1_000, pool_max: 5 };

/** The API on a database that is locked, stalled or whose connections are all killed: 503 in bounded time, never 500. */
describe('the API when the database is locked, stalled or drops its connections', { skip: POSTGRES_ONLY }, () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let admin: pg.Client;
  let url: string;

  before(async () => {
    const database = await openTestDatabase({ timeouts: TIMEOUTS });
    url = present(database.url, 'a PostgreSQL scratch database has a URL');
    t = await startTestApp({ database });
    merchant = await t.createMerchant('Stall');
    await t.createSeller({
      currency: 'THB',
      payment_method: 'promptpay',
      display_name: 'S',
      liquidity_minor: 100_000_000,
      rate: '35.00',
      promptpay_id: '0812345678',
    });
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  after(async () => {
    await admin.end();
    await t.close();
  });

  const timed = async <T>(work: () => Promise<T>) => {
    const started = performance.now();
    const result = await work();
    return { result, ms: performance.now() - started };
  };

  it('a table locked by another session: 503 SERVICE_UNAVAILABLE with Retry-After within the lock timeout; /readyz and /healthz stay fast', async () => {
    assert.equal((await t.call('GET', '/v1/payments', merchant.live)).statusCode, 200);
    await admin.query('begin');
    await admin.query('lock table payments in access exclusive mode');
    try {
      const { result: locked, ms } = await timed(() => t.call('GET', '/v1/payments', merchant.live));
      assert.equal(locked.statusCode, 503, locked.body);
      assert.equal(locked.json().error.code, 'SERVICE_UNAVAILABLE');
      assert.equal(locked.json().success, false);
      assert.equal(locked.headers['retry-after'], '2');
      assert.ok(
        ms >= TIMEOUTS.lock_timeout_ms - 50 && ms < TIMEOUTS.lock_timeout_ms + 1_500,
        `answered after ${Math.round(ms)} ms`,
      );

      // every pooled connection waits on the lock: readiness and liveness still answer at once
      const stuck = Array.from({ length: TIMEOUTS.pool_max * 3 }, () => t.call('GET', '/v1/payments', merchant.live));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const { result: ready, ms: ready_ms } = await timed(() => t.request({ method: 'GET', url: '/readyz' }));
      assert.ok(ready_ms < 2_000, `/readyz answered after ${Math.round(ready_ms)} ms`);
      assert.ok([200, 503].includes(ready.statusCode), ready.body);
      const { result: health, ms: health_ms } = await timed(() => t.request({ method: 'GET', url: '/healthz' }));
      assert.equal(health.statusCode, 200);
      assert.ok(health_ms < 200, `/healthz answered after ${Math.round(health_ms)} ms`);
      const statuses = (await Promise.all(stuck)).map((response) => response.statusCode);
      assert.deepEqual(
        [...new Set(statuses)],
        [503],
        'every waiting request is 503 (lock timeout or pool wait), none 500',
      );

      // trades batched together, and the batches queued behind a stalled one, are refused together: no request waits
      // out one lock timeout per batch ahead of it
      const { result: trades, ms: trades_ms } = await timed(() =>
        Promise.all(
          Array.from({ length: 12 }, (_, index) =>
            t.call('POST', '/v1/trades', merchant.live, {
              order_id: `stalled-${index}`,
              amount: '10.00',
              currency: 'THB',
              return_url: 'https://shop.example/r',
            }),
          ),
        ),
      );
      assert.deepEqual([...new Set(trades.map((response) => response.statusCode))], [503]);
      assert.ok(
        trades_ms < 2 * TIMEOUTS.lock_timeout_ms + 1_500,
        `the trades were answered after ${Math.round(trades_ms)} ms`,
      );
    } finally {
      await admin.query('rollback');
    }
    assert.equal((await t.call('GET', '/v1/payments', merchant.live)).statusCode, 200);
    const after = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: 'after-stall',
      amount: '10.00',
      currency: 'THB',
      return_url: 'https://shop.example/r',
    });
    assert.equal(after.statusCode, 201, after.body);
    assert.equal(
      (await t.call('GET', '/v1/payments?order_id=stalled-0', merchant.live)).json().data.length,
      0,
      'nothing of a refused trade was kept',
    );
  });

  it('every backend killed again and again under load: no 500, and the pool serves after', async () => {
    const pids = async () =>
      (
        await admin.query<{ pid: number }>(
          'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
        )
      ).rows.map((row) => row.pid);
    let killing = true;
    let killed = 0;
    const killer = (async () => {
      while (killing) {
        for (const pid of await pids()) {
          await admin.query('select pg_terminate_backend($1::int)', [pid]);
          killed += 1;
        }
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    })();
    const statuses: number[] = [];
    const started = performance.now();
    let n = 0;
    while (performance.now() - started < 3_000) {
      const batch = await Promise.all([
        t.call('GET', '/v1/payments', merchant.live),
        t.call('GET', '/v1/webhook-endpoints', merchant.sandbox),
        t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, { scenario: 'matched_then_completed' }),
        t.call('POST', '/v1/fx/quote-locks', merchant.live, { currency: 'THB' }),
        t.call('GET', `/v1/payments/${randomUUID()}`, merchant.live),
      ]);
      statuses.push(...batch.map((response) => response.statusCode));
      n += 1;
    }
    killing = false;
    await killer;
    assert.ok(killed > 0 && n > 3);
    const counts = Object.fromEntries(
      [...new Set(statuses)].map((status) => [status, statuses.filter((s) => s === status).length]),
    );
    assert.equal(counts[500], undefined, `no 500 among ${JSON.stringify(counts)}`);
    console.log(`kill run: ${killed} backends killed, ${statuses.length} requests: ${JSON.stringify(counts)}`);
    assert.ok(
      statuses.every((status) => [200, 201, 404, 409, 503].includes(status)),
      JSON.stringify(counts),
    );
    assert.equal((await t.call('GET', '/v1/payments', merchant.live)).statusCode, 200);
    assert.equal(
      (await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, { scenario: 'matched_then_completed' }))
        .statusCode,
      201,
    );
  });

  it('a read whose connection the server ended is retried on a fresh one, and so is a transaction that never reached COMMIT', async () => {
    const database = t.application.database;
    // the read: its pooled connection is killed while it runs
    const slow = database.db.selectNoFrom(sql<number>`(select 1 from pg_sleep(0.3))`.as('one')).execute();
    await new Promise((resolve) => setTimeout(resolve, 100));
    await admin.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query like '%pg_sleep(0.3)%' and pid <> pg_backend_pid()",
    );
    assert.deepEqual(await slow, [{ one: 1 }]);
    // the transaction: killed between its statements, run again once, committed once
    let runs = 0;
    const result = await database.db.transaction().execute(async (trx) => {
      runs += 1;
      const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
      if (runs === 1) await admin.query('select pg_terminate_backend($1::int)', [pid]);
      return (await sql<{ two: number }>`select 2 as two`.execute(trx)).rows[0]!.two;
    });
    assert.equal(result, 2);
    assert.equal(runs, 2);
  });
});

describe('LISTEN after its connection drops', { skip: POSTGRES_ONLY }, () => {
  it('reopens, delivers a wake-up at once, and later notifications as before', async () => {
    const database = await openTestDatabase();
    const admin = new pg.Client({ connectionString: present((database as { url?: string }).url, 'a scratch URL') });
    await admin.connect();
    const received: { payload: string; at_ms: number }[] = [];
    const unlisten = await database.listen('mpay_test_wake', (payload) =>
      received.push({ payload, at_ms: performance.now() }),
    );
    try {
      await admin.query(`notify mpay_test_wake, 'before'`);
      for (let waited = 0; waited < 2000 && received.length < 1; waited += 10)
        await new Promise((resolve) => setTimeout(resolve, 10));
      assert.deepEqual(
        received.map((r) => r.payload),
        ['before'],
      );
      const killed_at = performance.now();
      const { rowCount } = await admin.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'LISTEN%'",
      );
      assert.equal(rowCount, 1);
      for (let waited = 0; waited < 5000 && received.length < 2; waited += 10)
        await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(received[1]?.payload, '', 'a wake-up of its own after reopening');
      assert.ok(
        received[1]!.at_ms - killed_at < 2_000,
        `the wake-up came ${Math.round(received[1]!.at_ms - killed_at)} ms after the kill`,
      );
      await admin.query(`notify mpay_test_wake, 'after'`);
      for (let waited = 0; waited < 2000 && received.length < 3; waited += 10)
        await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(received[2]?.payload, 'after');
    } finally {
      await unlisten();
      await admin.end();
      await database.close();
    }
  });
});

/** A TCP proxy in front of PostgreSQL that can stop passing bytes: a server that stalls without closing anything. */
async function stallableProxy(target_url: string) {
  const target = new URL(target_url);
  const sockets = new Set<net.Socket>();
  let frozen = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    client.on('data', (chunk) => void (frozen || upstream.write(chunk)));
    upstream.on('data', (chunk) => void (frozen || client.write(chunk)));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(target_url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as net.AddressInfo).port);
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: proxied.toString(),
    freeze: (on: boolean) => void (frozen = on),
    /** The server is gone: every connection ends and new ones are refused. */
    async down() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    async up() {
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the API when the database server stalls (answers nothing, closes nothing)', { skip: POSTGRES_ONLY }, () => {
  it('503 within the statement timeout and a grace, /readyz within 2 s, and service again once it answers', async () => {
    const scratch = await openTestDatabase();
    const proxy = await stallableProxy(present(scratch.url, 'a scratch URL'));
    const database = await openDatabase({ database_url: proxy.url, data_dir: '', timeouts: TIMEOUTS });
    const t = await startTestApp({ database: { ...database, async close() {} } });
    try {
      const merchant = await t.createMerchant('Stalled');
      assert.equal((await t.call('GET', '/v1/payments', merchant.live)).statusCode, 200);
      proxy.freeze(true);
      const started = performance.now();
      const [stalled, ready] = await Promise.all([
        t.call('GET', '/v1/payments', merchant.live),
        t
          .request({ method: 'GET', url: '/readyz' })
          .then((response) => ({ response, ms: performance.now() - started })),
      ]);
      const ms = performance.now() - started;
      assert.equal(stalled.statusCode, 503, stalled.body);
      assert.equal(stalled.json().error.code, 'SERVICE_UNAVAILABLE');
      assert.ok(ms < TIMEOUTS.statement_timeout_ms + 2_000 + 1_500, `answered after ${Math.round(ms)} ms`);
      assert.equal(ready.response.statusCode, 503);
      assert.ok(ready.ms < 2_000, `/readyz answered after ${Math.round(ready.ms)} ms`);
      proxy.freeze(false);
      let after = await t.call('GET', '/v1/payments', merchant.live);
      for (let tries = 0; tries < 20 && after.statusCode !== 200; tries += 1)
        after = await t.call('GET', '/v1/payments', merchant.live);
      assert.equal(after.statusCode, 200, after.body);

      // the server gone altogether (connections ended, new ones refused): 503 at once, never 500
      await proxy.down();
      const gone_started = performance.now();
      const gone = await Promise.all([
        t.call('GET', '/v1/payments', merchant.live),
        t.call('POST', '/v1/trades', merchant.live, {
          order_id: 'gone',
          amount: '10.00',
          currency: 'THB',
          return_url: 'https://shop.example/r',
        }),
        t.request({ method: 'GET', url: '/readyz' }),
      ]);
      assert.deepEqual(
        gone.map((response) => response.statusCode),
        [503, 503, 503],
      );
      assert.equal(gone[0]!.json().error.code, 'SERVICE_UNAVAILABLE');
      assert.ok(
        performance.now() - gone_started < 2_000,
        `answered after ${Math.round(performance.now() - gone_started)} ms`,
      );
      await proxy.up();
      let back = await t.call('GET', '/v1/payments', merchant.live);
      for (let tries = 0; tries < 20 && back.statusCode !== 200; tries += 1)
        back = await t.call('GET', '/v1/payments', merchant.live);
      assert.equal(back.statusCode, 200, back.body);
    } finally {
      proxy.freeze(false);
      await t.close();
      await database.close();
      await proxy.close();
      await scratch.close();
    }
  });
});
