/**
 * FIFO matcher throughput: 10,000 pending sell orders and 10,000 pending buy orders (same multiset of currency and
 * amount, buys in shuffled order), matched to the end by the worker function, on PGlite (default) or PostgreSQL
 * (DATABASE_URL). Beside it, in the same run and database, a baseline: the bare ledger mints alone (the one ledger
 * write every pair makes), in transactions of the same size. Prints figures and ratios; never fails on speed.
 *
 *   node bench/matcher.ts [--orders 10000] [--batch 200] [--workers 1]
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/matcher.ts --workers 4
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { createApplication } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type DatabaseHandle } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { accounts } from '../src/modules/ledger/port.ts';
import { createMerchant } from '../src/modules/merchants/service.ts';
import { runMatcher } from '../src/modules/order-matching/matcher.ts';

const { values } = parseArgs({ options: { orders: { type: 'string', default: '10000' }, batch: { type: 'string', default: '200' }, workers: { type: 'string', default: '1' } } });
const orders = Number(values.orders);
const batch_size = Number(values.batch);
const workers = Number(values.workers);
const server_url = process.env['DATABASE_URL'];

let database: DatabaseHandle;
let drop: (() => Promise<void>) | undefined;
let database_url: string | undefined;
if (server_url) {
  const name = `mpay_bench_${randomUUID().slice(0, 8)}`;
  const admin = new pg.Client({ connectionString: server_url });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(server_url);
  url.pathname = `/${name}`;
  database_url = url.toString();
  database = await openDatabase({ database_url, data_dir: '' });
  drop = async () => {
    const cleanup = new pg.Client({ connectionString: server_url });
    await cleanup.connect();
    await cleanup.query(`drop database if exists ${name} with (force)`);
    await cleanup.end();
  };
} else {
  database = await openDatabase({ data_dir: 'memory://' });
}

try {
  await migrateToLatest(database.db);
  const config = loadConfig({
    ...(database_url ? { DATABASE_URL: database_url } : {}),
    LOG_LEVEL: 'silent',
    ADMIN_SERVICE_TOKEN: 'bench-admin-token-0123456789',
    INTERNAL_SERVICE_TOKEN: 'bench-internal-token-0123456789',
    LEDGER_MINT_SOURCE_ACCOUNT: 'treasury',
  });
  const application = await createApplication({ config, database, logger: pino({ level: 'silent' }) });
  const { db } = database;
  const deps = { db, clock: application.clock, secrets: application.secrets.secrets, webhooks: application.webhooks.deps };
  const seller = await createMerchant(deps, { name: 'Bench seller' });
  const buyer = await createMerchant(deps, { name: 'Bench buyer' });
  const seller_id = seller.merchant.id;
  const buyer_id = buyer.merchant.id;

  // The book, inserted in bulk: amounts 1..5 PAY in THB and AUD; sells oldest first, buys of the same multiset shuffled.
  const started_at = Date.now() - orders * 10;
  await sql`
    insert into sell_orders (id, merchant_id, is_sandbox, status, amount_micro_pay, currency, target_currency, target_fiat_amount, expires_at, created_at)
    select gen_random_uuid(), ${seller_id}::uuid, false, 'pending', ((i % 5) + 1) * 1000000, 'PAY', case when i % 2 = 0 then 'THB' else 'AUD' end, 3500,
      now() + interval '1 day', to_timestamp((${started_at}::bigint + i * 5) / 1000.0)
    from generate_series(1, ${orders}) as i`.execute(db);
  await sql`
    insert into buy_orders (id, merchant_id, is_sandbox, status, amount_micro_pay, fiat_currency, fiat_amount, expires_at, created_at)
    select gen_random_uuid(), ${buyer_id}::uuid, false, 'pending', ((i % 5) + 1) * 1000000, case when i % 2 = 0 then 'THB' else 'AUD' end, 3500,
      now() + interval '1 day', to_timestamp((${started_at}::bigint + (hashint4(i) & 65535) * 7 + i) / 1000.0)
    from generate_series(1, ${orders}) as i`.execute(db).catch(async () => {
    // hashint4 is not in every build: fall back to a plain permutation.
    await sql`
      insert into buy_orders (id, merchant_id, is_sandbox, status, amount_micro_pay, fiat_currency, fiat_amount, expires_at, created_at)
      select gen_random_uuid(), ${buyer_id}::uuid, false, 'pending', ((i % 5) + 1) * 1000000, case when i % 2 = 0 then 'THB' else 'AUD' end, 3500,
        now() + interval '1 day', to_timestamp((${started_at}::bigint + ((i * 7919) % ${orders}) * 5 + 1) / 1000.0)
      from generate_series(1, ${orders}) as i`.execute(db);
  });
  await sql`analyze`.execute(db);

  const matcher = { ...application.payouts.matcher, batch_size, onMatched: undefined, metrics: undefined };
  const match_start = performance.now();
  let pairs = 0;
  let passes = 0;
  for (;;) {
    const done = (await Promise.all(Array.from({ length: workers }, () => runMatcher(matcher)))).reduce((a, b) => a + b, 0);
    passes += 1;
    pairs += done;
    if (done === 0) break;
  }
  const match_seconds = (performance.now() - match_start) / 1000;

  // Baseline: the same number of ledger mints alone, in transactions of the same size.
  const mint_start = performance.now();
  for (let done = 0; done < pairs; done += batch_size) {
    await db.transaction().execute(async (trx) => {
      for (let i = done; i < Math.min(pairs, done + batch_size); i++) {
        await application.ledger.transfer(
          { key: `bench:${i}`, kind: 'mint', debit_account: accounts.mintSource('bench', false), credit_account: accounts.merchantAvailable(buyer_id, false), amount_micro_pay: 1_000_000 },
          { trx },
        );
      }
    });
  }
  const mint_seconds = (performance.now() - mint_start) / 1000;

  const left = await db.selectFrom('sell_orders').select((eb) => eb.fn.countAll().as('n')).where('status', '=', 'pending').executeTakeFirstOrThrow();
  const verification = await application.ledger.verify();
  console.log(`matcher bench on ${database.kind}: ${orders} sells x ${orders} buys, batch ${batch_size}, ${workers} worker(s)`);
  console.log(`  matched ${pairs} pairs in ${match_seconds.toFixed(2)} s over ${passes} passes: ${(pairs / match_seconds).toFixed(0)} pairs/s (pending sells left: ${left.n})`);
  console.log(`  baseline, bare ledger mints: ${(pairs / mint_seconds).toFixed(0)} mints/s; matcher / baseline = ${(mint_seconds / match_seconds).toFixed(2)}`);
  console.log(`  ledger verify: ${verification.ok ? 'ok' : verification.problems.join('; ')}`);
  await application.close();
} finally {
  await database.close();
  await drop?.();
}
