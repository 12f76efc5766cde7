/**
 * Create-payment and get-payment throughput and latency at 32 connections on PostgreSQL, each beside a baseline
 * endpoint in the same run and through the same pool: one bare INSERT (for create) and one SELECT by primary key
 * (for get). Prints figures and ratios; never fails on speed.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/payments.ts [--seconds 8] [--connections 32]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import pg from 'pg';
import { createApplication } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { createSeller } from '../src/modules/matching/service.ts';
import { createMerchant } from '../src/modules/merchants/service.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '8' }, connections: { type: 'string', default: '32' } } });
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const server_url = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const name = `mpay_bench_${randomUUID().slice(0, 8)}`;
const admin = new pg.Client({ connectionString: server_url });
await admin.connect();
await admin.query(`create database ${name}`);
const url = new URL(server_url);
url.pathname = `/${name}`;

const database = await openDatabase({ database_url: url.toString(), data_dir: '' });
try {
  await migrateToLatest(database.db);
  const config = loadConfig({
    DATABASE_URL: url.toString(),
    LOG_LEVEL: 'silent',
    ADMIN_SERVICE_TOKEN: 'bench-admin-token-0123456789',
    INTERNAL_SERVICE_TOKEN: 'bench-internal-token-0123456789',
    RATE_LIMIT_LIVE_PER_SECOND: '1000000',
  });
  const application = await createApplication({ config, database });
  const { db } = database;
  const merchant = await createMerchant({ db, clock: application.clock, secrets: application.secrets.secrets, webhooks: application.webhooks.deps }, { name: 'Bench' });
  await createSeller(db, application.clock, { currency: 'THB', payment_method: 'promptpay', display_name: 'Bench seller', liquidity_minor: 9_000_000_000_000, rate: '35.00', promptpay_id: '0812345678' });
  await sql`create table bench_rows (id uuid primary key, order_id text not null, amount_minor bigint not null, created_at timestamptz not null)`.execute(db);

  // The baselines: the same server, the same pool, one statement each.
  application.app.post('/bench/insert', { config: { auth: 'public', rate_limit: false } }, async (_request, reply) => {
    const id = randomUUID();
    await sql`insert into bench_rows (id, order_id, amount_minor, created_at) values (${id}, ${id}, 10000, now())`.execute(db);
    reply.status(201);
    return { success: true, data: { id } };
  });
  application.app.get('/bench/select/:id', { config: { auth: 'public', rate_limit: false } }, async (request) => {
    const { id } = request.params as { id: string };
    const row = await sql`select * from payments where id = ${id}`.execute(db);
    return { success: true, data: row.rows[0] };
  });
  const address = await application.app.listen({ port: 0, host: '127.0.0.1' });

  let counter = 0;
  const payment_ids: string[] = [];
  const create_body = () => JSON.stringify({ order_id: `bench-${++counter}-${process.hrtime.bigint()}`, amount: 10_000, currency: 'THB', return_url: 'https://shop.example/r' });

  async function run(title: string, options: autocannon.Options) {
    // a short warm-up, then the measured run
    await autocannon({ ...options, url: options.url, connections, duration: 1 });
    const result = await autocannon({ ...options, connections, duration: seconds });
    const non2xx = result.non2xx + result.errors;
    return { title, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, total: result.requests.total, non2xx };
  }

  const headers = { 'content-type': 'application/json', 'x-api-key': merchant.api_keys.live };
  const insert = await run('baseline: one INSERT', { url: `${address}/bench/insert`, method: 'POST' });
  const create = await run('POST /v1/trades', {
    url: `${address}/v1/trades`,
    method: 'POST',
    headers,
    requests: [{ setupRequest: (request) => ({ ...request, body: create_body() }) }],
  });
  for (const row of await db.selectFrom('payments').select('id').limit(1000).execute()) payment_ids.push(row.id);
  let next = 0;
  const select = await run('baseline: one SELECT by id', {
    url: `${address}/bench/select/x`,
    requests: [{ setupRequest: (request) => ({ ...request, path: `/bench/select/${payment_ids[next++ % payment_ids.length]}` }) }],
  });
  const get = await run('GET /v1/payments/{id}', {
    url: `${address}/v1/payments/x`,
    headers,
    requests: [{ setupRequest: (request) => ({ ...request, path: `/v1/payments/${payment_ids[next++ % payment_ids.length]}` }) }],
  });

  const line = (r: typeof insert, base?: typeof insert) =>
    `${r.title.padEnd(28)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${String(r.p50).padStart(4)} ms   p99 ${String(r.p99).padStart(4)} ms   non-2xx ${r.non2xx}` +
    (base ? `   throughput ${(r.rps / base.rps).toFixed(2)}x of baseline, p99 ${(r.p99 / Math.max(base.p99, 1)).toFixed(2)}x` : '');
  console.log(`\nPostgreSQL, ${connections} connections, ${seconds} s per endpoint (Node ${process.version})`);
  console.log(line(insert));
  console.log(line(create, insert));
  console.log(line(select));
  console.log(line(get, select));
  await application.close();
} finally {
  await database.close();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
}
