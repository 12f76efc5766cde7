/**
 * `node bench/create-call.ts [--concurrency 10,30] [--seconds 6] [--prefill 20000] [--explain 40] [--setup <sql>]
 *   [--variant <sql> --undo <sql> --rounds 6]`
 *
 * Where PostgreSQL's time goes in the batched payment create (`mpay_create_batch`), per create. On a scratch
 * PostgreSQL database (DATABASE_URL's server, dropped at the end): one merchant, one seller with ample liquidity,
 * optionally `--prefill` payments (with their legs, events and deliveries) so the indexes have a realistic size. Then,
 * for each concurrency, that many loops call `POST /v1/trades` through the real application (`app.inject`, the
 * batching allocator, the real call) for `--seconds`: the loops' requests arrive together, so a batch holds about as
 * many creates as there are loops (and, starting on an idle allocator, reads its offers first). It prints per create:
 * every statement the api sent (calls, time to answer and the backend's CPU while it ran, read from
 * /proc/<backend>/schedstat before and after), the whole database's backends' CPU, and the batches' mean size. With
 * `--variant`, it alternates rounds of A (`--undo` applied) and B (`--variant` applied) instead and prints both
 * medians: on a shared machine only such a side-by-side figure tells a few per cent apart. With `--explain N`, N more
 * calls run with auto_explain loaded in the pool's sessions (log_nested_statements, log_analyze): it prints each inner
 * statement's time per call (the call's statements, the delivery trigger's, the foreign-key checks; auto_explain's own
 * logging inflates the many small ones), and writes the last call's plans to /tmp/create-call-plans.txt. The last
 * call's parameters go to /tmp/create-call-parameters.json (for an EXPLAIN by hand). Prints figures only; nothing gates on them.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import type pg from 'pg';
import pino from 'pino';
import { createApplication } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { PreparingClient } from '../src/db/prepared.ts';
import { openScratchDatabase } from '../src/db/scratch.ts';
import { createSeller } from '../src/modules/liquidity/service.ts';
import { createMerchant } from '../src/modules/merchants/service.ts';
import type { PaymentCreateBatcher } from '../src/modules/payments/create-batch.ts';

const { values } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '10,30' },
    seconds: { type: 'string', default: '6' },
    prefill: { type: 'string', default: '20000' },
    explain: { type: 'string', default: '0' },
    /** SQL run on the scratch database before measuring (to try a variant: an index dropped, a function replaced). */
    setup: { type: 'string' },
    /**
     * A/B: SQL that makes variant B (and `--undo`, SQL that makes A again); rounds of `--seconds` alternate A and B on
     * the same database, so both see the same machine (other load on it moves both), and it prints each round's CPU
     * in the call per create and the medians.
     */
    variant: { type: 'string' },
    undo: { type: 'string' },
    rounds: { type: 'string', default: '6' },
  },
});

const TOKEN = 'bench-token-0123456789abcdef0123';
const server_url = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const database = await openScratchDatabase({ server_url, prefix: 'mpay_bench_call' });
const database_name = new URL(database.url!).pathname.slice(1);
const application = await createApplication({
  config: loadConfig({
    DATABASE_URL: database.url!,
    ROLES: 'api',
    LOG_LEVEL: 'silent',
    ADMIN_SERVICE_TOKEN: TOKEN,
    INTERNAL_SERVICE_TOKEN: TOKEN,
    RATE_LIMIT_LIVE_PER_SECOND: '1000000',
    RATE_LIMIT_SANDBOX_PER_SECOND: '1000000',
  }),
  database,
  logger: pino({ level: 'silent' }),
});
const { db } = database;
const merchant = await createMerchant(application.merchants, { name: 'Bench' });
await db.updateTable('sellers').set({ active: false }).where('synthetic', '=', false).execute();
await createSeller(db, application.clock, {
  currency: 'THB',
  payment_method: 'promptpay',
  display_name: 'Bench seller',
  promptpay_id: '0812345678',
  liquidity_minor: 9_000_000_000_000,
  rate: '35.00',
});
const batcher = application.payments.create_batcher as PaymentCreateBatcher;

let order = 0;
const create = async () => {
  const response = await application.app.inject({
    method: 'POST',
    url: '/v1/trades',
    headers: { 'x-api-key': merchant.api_keys.live },
    payload: { amount: 10_000, currency: 'THB', return_url: 'https://shop.example/r', order_id: `call-${++order}` },
  });
  if (response.statusCode !== 201) throw new Error(`create: ${response.statusCode} ${response.body}`);
};

// --- every statement the pool's clients send: calls, time to answer, the backend's CPU meanwhile ---

interface Tally {
  calls: number;
  ms: number;
  cpu_ns: number;
}
let tallies = new Map<string, Tally>();
/** The last create call's text and parameters (written to /tmp/create-call-parameters.json at the end, for EXPLAIN). */
let last_call: { text: string; values: unknown[] } | undefined;
/** While set, the notices (auto_explain's plans) of each client's create call are kept here. */
let explained: string[][] | undefined;
const explaining = new WeakSet<pg.Client>();
const collecting = new WeakMap<pg.Client, string[]>();

function backendCpuNs(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return 0;
  }
}

const statementName = (text: string) =>
  text.includes('mpay_create_batch')
    ? 'select mpay_create_batch(...) (the call)'
    : text
        .replace(/\s+/g, ' ')
        .replace(/\$\d+(, \$\d+)*/g, '$…')
        .slice(0, 90);

const query = PreparingClient.prototype.query;
PreparingClient.prototype.query = function (this: PreparingClient, ...args: unknown[]): never {
  const text = args[0];
  if (typeof text !== 'string') return query.apply(this, args as never);
  if (explained && !explaining.has(this)) {
    explaining.add(this);
    this.on('notice', (notice) => collecting.get(this)?.push(notice.message ?? ''));
    const loaded = query.call(
      this,
      `load 'auto_explain'; set auto_explain.log_min_duration = 0; set auto_explain.log_analyze = on;
       set auto_explain.log_nested_statements = on; set auto_explain.log_level = notice; set auto_explain.log_triggers = on;
       set client_min_messages = notice`,
    ) as unknown as Promise<unknown>;
    return loaded.then(() => this.query(...args)) as never;
  }
  const pid = (this as unknown as { processID?: number }).processID;
  const is_call = text.includes('mpay_create_batch');
  if (is_call && args[1]) last_call = { text, values: args[1] as unknown[] };
  const notices: string[] = [];
  if (explained && is_call) collecting.set(this, notices);
  const cpu_before = backendCpuNs(pid);
  const at = performance.now();
  const result = query.apply(this, args as never) as unknown;
  if (result instanceof Promise)
    result.then(
      () => {
        const name = statementName(text);
        const tally = tallies.get(name) ?? { calls: 0, ms: 0, cpu_ns: 0 };
        tally.calls++;
        tally.ms += performance.now() - at;
        tally.cpu_ns += backendCpuNs(pid) - cpu_before;
        tallies.set(name, tally);
        if (explained && is_call) {
          collecting.delete(this);
          explained.push(notices);
        }
      },
      () => {},
    );
  return result as never;
};

// --- the database's backends' CPU (all of them: the pool's and any other) ---

function databaseCpuNs(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split(' ').includes(database_name))
        total += backendCpuNs(Number(entry));
    } catch {
      // gone
    }
  }
  return total;
}

async function loops(concurrency: number, until: () => boolean): Promise<number> {
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (!until()) {
        await create();
        done++;
      }
    }),
  );
  return done;
}

async function prefill(count: number): Promise<void> {
  if (count <= 0) return;
  // one real payment to copy (its leg, its event and the event's delivery come with each copy)
  await loops(1, () => order >= 1);
  await new Promise((resolve) => setTimeout(resolve, 1200)); // its request log row is written a second later
  const started = performance.now();
  await sql`insert into payments select (jsonb_populate_record(null::payments, to_jsonb(p) || jsonb_build_object('id', gen_random_uuid(), 'order_id', 'fill-' || g))).*
            from payments p, generate_series(1, ${count}::int) g where p.order_id = 'call-1'`.execute(db);
  await sql`insert into payment_legs (payment_id, seller_id, match_order, allocated_fiat_amount, rate, amount_micro_pay, reserved_minor)
            select p.id, l.seller_id, l.match_order, l.allocated_fiat_amount, l.rate, l.amount_micro_pay, l.reserved_minor
            from payments p, payment_legs l, payments o where o.order_id = 'call-1' and l.payment_id = o.id and p.order_id like 'fill-%'`.execute(
    db,
  );
  await sql`insert into events (id, merchant_id, is_sandbox, type, resource_type, resource_id, payload, created_at)
            select gen_random_uuid(), e.merchant_id, e.is_sandbox, e.type, e.resource_type, p.id, e.payload, e.created_at
            from payments p, events e, payments o where o.order_id = 'call-1' and e.resource_id = o.id and p.order_id like 'fill-%'`.execute(
    db,
  );
  await sql`insert into api_request_log (id, merchant_id, api_key_id, is_sandbox, method, path, status, duration_ms, request_id, created_at)
            select gen_random_uuid(), r.merchant_id, r.api_key_id, r.is_sandbox, r.method, r.path, r.status, r.duration_ms, 'fill-' || g, r.created_at
            from (select * from api_request_log limit 1) r, generate_series(1, ${count}::int) g`.execute(db);
  await sql`vacuum analyze`.execute(db);
  console.log(
    `prefilled ${count} payments, legs, events, deliveries, request log rows in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}

function printTallies(creates: number): void {
  const rows = [...tallies].sort((a, b) => b[1].cpu_ns - a[1].cpu_ns);
  console.log(
    '  statement                                                                          calls/create  ms/call  backend CPU us/create',
  );
  for (const [name, tally] of rows)
    console.log(
      `  ${name.padEnd(84)} ${(tally.calls / creates).toFixed(3).padStart(8)} ${(tally.ms / tally.calls).toFixed(2).padStart(8)} ${(tally.cpu_ns / 1000 / creates).toFixed(1).padStart(12)}`,
    );
}

async function measure(concurrency: number, seconds: number): Promise<void> {
  // warm-up: every pooled connection prepares the call and caches its plans
  const warm_until = performance.now() + 1000;
  await loops(concurrency, () => performance.now() > warm_until);
  tallies = new Map();
  const stats_before = { ...batcher.stats };
  const db_before = databaseCpuNs();
  const started = performance.now();
  const until = started + seconds * 1000;
  const creates = await loops(concurrency, () => performance.now() > until);
  const elapsed_s = (performance.now() - started) / 1000;
  const db_us = (databaseCpuNs() - db_before) / 1000 / creates;
  const batches = batcher.stats.batches - stats_before.batches;
  const call = tallies.get(statementName('mpay_create_batch'));
  console.log(
    `\n${concurrency} loops: ${creates} creates in ${elapsed_s.toFixed(1)} s (${(creates / elapsed_s).toFixed(0)}/s), ${batches} batches, mean ${((batcher.stats.batched - stats_before.batched) / Math.max(1, batches)).toFixed(1)} creates/batch, ${batcher.stats.alone - stats_before.alone} alone`,
  );
  console.log(
    `  PostgreSQL CPU per create: ${db_us.toFixed(1)} us (all backends of the database); in the call: ${call ? (call.cpu_ns / 1000 / creates).toFixed(1) : '-'} us/create, ${call ? (call.cpu_ns / 1e6 / call.calls).toFixed(2) : '-'} ms CPU and ${call ? (call.ms / call.calls).toFixed(2) : '-'} ms to answer per call`,
  );
  printTallies(creates);
}

/** The backend's CPU in the create call per create over `seconds` at `concurrency`, after a short warm-up. */
async function callCpuPerCreate(concurrency: number, seconds: number): Promise<{ call_us: number; db_us: number }> {
  const warm_until = performance.now() + 300;
  await loops(concurrency, () => performance.now() > warm_until);
  tallies = new Map();
  const db_before = databaseCpuNs();
  const until = performance.now() + seconds * 1000;
  const creates = await loops(concurrency, () => performance.now() > until);
  const call = tallies.get(statementName('mpay_create_batch'));
  return { call_us: (call?.cpu_ns ?? 0) / 1000 / creates, db_us: (databaseCpuNs() - db_before) / 1000 / creates };
}

async function compare(concurrency: number, seconds: number, rounds: number, variant: string, undo: string) {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const a: number[] = [];
  const b: number[] = [];
  const a_db: number[] = [];
  const b_db: number[] = [];
  for (let round = 0; round < rounds; round++) {
    await sql.raw(undo).execute(db);
    const ra = await callCpuPerCreate(concurrency, seconds);
    await sql.raw(variant).execute(db);
    const rb = await callCpuPerCreate(concurrency, seconds);
    a.push(ra.call_us);
    b.push(rb.call_us);
    a_db.push(ra.db_us);
    b_db.push(rb.db_us);
    console.log(
      `  round ${round + 1}: A ${ra.call_us.toFixed(1)} us  B ${rb.call_us.toFixed(1)} us (call CPU per create)`,
    );
  }
  console.log(
    `${concurrency} loops: median call CPU per create A ${median(a).toFixed(1)} us, B ${median(b).toFixed(1)} us (${(((median(b) - median(a)) / median(a)) * 100).toFixed(1)} %); all backends A ${median(a_db).toFixed(1)} us, B ${median(b_db).toFixed(1)} us`,
  );
}

/** auto_explain's plans of `calls` create calls: each inner statement's time per call, and the trigger lines. */
async function explain(concurrency: number, calls: number): Promise<void> {
  explained = [];
  const warm_until = performance.now() + 500;
  await loops(concurrency, () => performance.now() > warm_until);
  explained = [];
  const stats_before = { ...batcher.stats };
  await loops(concurrency, () => (explained?.length ?? 0) >= calls);
  const plans = explained;
  explained = undefined;
  writeFileSync('/tmp/create-call-plans.txt', (plans.at(-1) ?? []).join('\n\n'));
  const creates = batcher.stats.batched - stats_before.batched;
  const per_statement = new Map<string, { n: number; ms: number }>();
  const triggers = new Map<string, { calls: number; ms: number }>();
  for (const notices of plans)
    for (const notice of notices) {
      const duration = /duration: ([\d.]+) ms/.exec(notice);
      const text = /Query Text: ([\s\S]*?)\n(?=\S|\s*[A-Z][a-z]+ ?[A-Z(]|$)/.exec(notice)?.[1] ?? notice.slice(0, 200);
      const name = text.replace(/\s+/g, ' ').trim().slice(0, 110);
      const tally = per_statement.get(name) ?? { n: 0, ms: 0 };
      tally.n++;
      tally.ms += Number(duration?.[1] ?? 0);
      per_statement.set(name, tally);
      for (const match of notice.matchAll(/Trigger ([^:]+): time=([\d.]+) calls=(\d+)/g)) {
        const key = `${match[1]} (in: ${name.slice(0, 40)})`;
        const t = triggers.get(key) ?? { calls: 0, ms: 0 };
        t.calls += Number(match[3]);
        t.ms += Number(match[2]);
        triggers.set(key, t);
      }
    }
  const n = plans.length;
  console.log(
    `\nauto_explain (analyze, nested) of ${n} calls at ${concurrency} loops, ${(creates / Math.max(1, batcher.stats.batches - stats_before.batches)).toFixed(1)} creates/batch: ms per call (statements nest: a statement's time includes the ones it runs)`,
  );
  for (const [name, tally] of [...per_statement].sort((a, b) => b[1].ms - a[1].ms))
    console.log(`  ${(tally.ms / n).toFixed(3).padStart(8)} ms  x${(tally.n / n).toFixed(1).padStart(5)}  ${name}`);
  console.log("  triggers (time includes the trigger function's statements):");
  for (const [name, t] of [...triggers].sort((a, b) => b[1].ms - a[1].ms))
    console.log(`  ${(t.ms / n).toFixed(3).padStart(8)} ms  calls ${(t.calls / n).toFixed(1).padStart(5)}  ${name}`);
}

try {
  await prefill(Number(values.prefill));
  if (values.setup) await sql.raw(values.setup).execute(db);
  for (const concurrency of values.concurrency.split(',').map(Number))
    if (values.variant)
      await compare(concurrency, Number(values.seconds), Number(values.rounds), values.variant, values.undo ?? '');
    else await measure(concurrency, Number(values.seconds));
  const explain_calls = Number(values.explain);
  if (explain_calls > 0) await explain(Number(values.concurrency.split(',')[0]), explain_calls);
} finally {
  if (last_call) writeFileSync('/tmp/create-call-parameters.json', JSON.stringify(last_call));
  await application.close();
  await database.close();
}
