/**
 * The bench scenarios. Each returns rows: a figure beside its baseline measured in the same run through the same
 * server and pool, and the issue's target for the ratio where it names one.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { accounts, type TransferCommand } from '../src/modules/ledger/port.ts';
import { createSeller } from '../src/modules/liquidity/service.ts';
import { createMerchant, type CreatedMerchant } from '../src/modules/merchants/service.ts';
import { PaymentCreateBatcher, type CreateBatcherStats } from '../src/modules/payments/create-batch.ts';
import { runMatcher } from '../src/modules/payouts/matcher.ts';
import { BENCH_TOKEN, timedLoop, type BenchContext } from './context.ts';
import type { CpuSpent } from './cpu.ts';
import type { LoadResult, LoadTarget } from './load.ts';

export interface Row {
  scenario: string;
  figure: string;
  per_s: number;
  unit: string;
  p50_ms?: number | undefined;
  p99_ms?: number | undefined;
  baseline?: {
    figure: string;
    per_s: number;
    p99_ms?: number | undefined;
    /** CPU per request of the baseline's own process (bench/bare.ts) and PostgreSQL, in the same run. */
    cpu?: { api_us: number; db_us: number; load_us: number; idle: number } | undefined;
  };
  /** Which run of the scenario (./run bench --runs N). */
  run?: number;
  /** figure / baseline throughput */
  ratio?: number;
  target?: string;
  failures?: number;
  rss_mb?: number;
  /** CPU per request (warm-up included) of the api process(es), the database's backends and the load generator, and the machine's idle share. */
  cpu?: { api_us: number; db_us: number; load_us: number; idle: number };
  note?: string;
}

const THB_SELLER = {
  currency: 'THB' as const,
  payment_method: 'promptpay' as const,
  display_name: 'Bench seller',
  promptpay_id: '0812345678',
};
export const TRADE = { amount: 10_000, currency: 'THB', return_url: 'https://shop.example/r' };

/** `count` live sellers at the best rates; with `deeper`, that many more active offers behind them (worse rates). */
/** The create's load target: `POST /v1/trades` with a new order id per request, with the merchant's live key by default. */
function tradeTarget(context: BenchContext, key = context.merchant.api_keys.live): LoadTarget {
  return {
    url: `${context.base_url}/v1/trades`,
    method: 'POST',
    headers: { 'x-api-key': key },
    body: TRADE,
    unique_field: 'order_id',
  };
}

export async function onlySellers(context: BenchContext, count: number, deeper = 0): Promise<void> {
  const { db } = context.database;
  await db.updateTable('sellers').set({ active: false }).where('synthetic', '=', false).execute();
  for (let i = 0; i < count; i++) {
    await createSeller(db, context.application.clock, {
      ...THB_SELLER,
      display_name: `Bench seller ${i + 1}`,
      liquidity_minor: 9_000_000_000_000,
      rate: `35.0${i}`,
    });
  }
  if (deeper > 0) {
    // copies of the first seller at 40 THB/PAY and up
    await sql`insert into sellers (select (jsonb_populate_record(null::sellers, to_jsonb(s) || jsonb_build_object('id', gen_random_uuid(), 'rate', 40 + g))).* from sellers s, generate_series(1, ${deeper}) g where s.id = (select id from sellers where active and not synthetic order by rate limit 1))`.execute(
      db,
    );
    await sql`analyze sellers`.execute(db);
  }
}

/** The bare INSERT baseline's figure name: a process of its own on PostgreSQL (bench/bare.ts). */
const bareName = (context: BenchContext, what: string) =>
  `bare ${what} (${context.baseline.kind === 'process' ? 'node:http+pg process' : 'in-server'})`;

const insertBaseline = (context: BenchContext, extra: { amount?: number; warmup_s?: number } = {}) =>
  context.load(
    { targets: [{ url: `${context.baseline.url}/insert`, method: 'POST' }], ...extra },
    context.baseline.pids,
  );

/** One HTTP figure beside its baseline from the same run: throughput, latency, failures and the ratio. */
function httpRow(
  scenario: string,
  figure: string,
  result: LoadResult & { cpu?: CpuSpent },
  baseline: { figure: string; result: LoadResult & { cpu?: CpuSpent } },
  extra: Pick<Row, 'target' | 'note' | 'rss_mb'> = {},
): Row {
  return {
    scenario,
    figure,
    per_s: result.requests_per_s,
    unit: 'req/s',
    p50_ms: result.p50_ms,
    p99_ms: result.p99_ms,
    failures: result.non_2xx + result.errors,
    baseline: {
      figure: baseline.figure,
      per_s: baseline.result.requests_per_s,
      p99_ms: baseline.result.p99_ms,
      cpu: baseline.result.cpu
        ? perRequest(baseline.result.cpu, baseline.result.total + baseline.result.warmup_total)
        : undefined,
    },
    ratio: result.requests_per_s / baseline.result.requests_per_s,
    ...(result.cpu ? { cpu: perRequest(result.cpu, result.total + result.warmup_total) } : {}),
    ...extra,
  };
}

function perRequest(cpu: CpuSpent, requests: number): NonNullable<Row['cpu']> {
  const us = (seconds: number) => (seconds * 1e6) / Math.max(1, requests);
  return { api_us: us(cpu.api_s), db_us: us(cpu.db_s), load_us: us(cpu.load_s), idle: cpu.idle };
}

/**
 * `sellers` live sellers; 0: a sandbox key (synthetic sellers: no liquidity row is reserved), the create without its
 * hot row. With `unbatched`, the same again with the batching allocator bypassed (every create in its own transaction),
 * so the two stand side by side in one run.
 */
async function createRows(
  context: BenchContext,
  scenario: string,
  sellers: number,
  unbatched = false,
  deeper = 0,
): Promise<Row[]> {
  if (sellers > 0) await onlySellers(context, sellers, deeper);
  const baseline = await insertBaseline(context);
  const key = sellers > 0 ? context.merchant.api_keys.live : context.merchant.api_keys.sandbox;
  const what =
    sellers > 0
      ? `POST /v1/trades, ${sellers} seller${sellers > 1 ? 's' : ''}${deeper ? ` before ${deeper.toLocaleString('en')} more offers` : ''}`
      : 'POST /v1/trades, sandbox (no seller row reserved)';
  const target =
    context.kind === 'pglite'
      ? sellers === 1
        ? '>= 1,500 req/s on PGlite'
        : undefined
      : sellers === 1
        ? '>= 1.0x, p99 <= 25 ms'
        : undefined;
  const measure = async (figure: string, bypass: boolean): Promise<Row> => {
    const batcher = context.application.payments.create_batcher;
    if (batcher instanceof PaymentCreateBatcher) batcher.bypass = bypass;
    try {
      const before = batcherStats(context);
      const create = await context.load({
        targets: [tradeTarget(context, key)],
      });
      const after = batcherStats(context);
      return httpRow(
        scenario,
        figure,
        create,
        { figure: bareName(context, 'INSERT'), result: baseline },
        {
          ...(target ? { target } : {}),
          note: bypass ? 'batching allocator bypassed: every create in its own transaction' : batchNote(before, after),
        },
      );
    } finally {
      if (batcher instanceof PaymentCreateBatcher) batcher.bypass = false;
    }
  };
  const rows = [await measure(what, false)];
  if (unbatched) rows.push(await measure(`${what}, unbatched`, true));
  return rows;
}

function batcherStats(context: BenchContext): CreateBatcherStats | undefined {
  const batcher = context.application.payments.create_batcher;
  return batcher instanceof PaymentCreateBatcher ? { ...batcher.stats } : undefined;
}

/**
 * The batching allocator's work during a run (warm-up included): mean batch size, requests that ran alone, and a
 * batch's mean time from its start to its call and in the call.
 */
function batchNote(before: CreateBatcherStats | undefined, after: CreateBatcherStats | undefined): string {
  if (!before || !after) return 'no batching allocator';
  const batches = after.batches - before.batches;
  const batched = after.batched - before.batched;
  const per_batch = (ms: number) => (ms / Math.max(1, batches)).toFixed(2);
  return `${batches} batches, mean ${(batched / Math.max(1, batches)).toFixed(1)} creates/batch, ${after.refused - before.refused} refused (ran alone), ${after.alone - before.alone} alone, ${after.failed_batches - before.failed_batches} failed batches; per batch ${per_batch(after.plan_ms - before.plan_ms)} ms planning, ${per_batch(after.call_ms - before.call_ms)} ms in its call`;
}

export async function paymentPaths(context: BenchContext): Promise<string[]> {
  const { db } = context.database;
  let rows = await db
    .selectFrom('payments')
    .select('id')
    .where('merchant_id', '=', context.merchant.merchant.id)
    .limit(1000)
    .execute();
  if (rows.length < 100) {
    await onlySellers(context, 1);
    await context.load({
      targets: [tradeTarget(context)],
      amount: 1000,
    });
    rows = await db
      .selectFrom('payments')
      .select('id')
      .where('merchant_id', '=', context.merchant.merchant.id)
      .limit(1000)
      .execute();
  }
  return rows.map((row) => row.id);
}

async function readRows(context: BenchContext, scenario: 'get' | 'list'): Promise<Row[]> {
  const ids = await paymentPaths(context);
  // fresh statistics after the creates before: the bare statement is planned for every request, and a plan made from
  // statistics of a much smaller table (a sort of every payment of the merchant) would stall the baseline, not the app
  if (context.kind === 'postgres') await sql`analyze payments`.execute(context.database.db);
  const prefix = new URL(context.baseline.url).pathname.replace(/\/$/, '');
  const baseline =
    scenario === 'get'
      ? await context.load(
          { targets: [{ url: `${context.baseline.url}/select/x`, paths: ids.map((id) => `${prefix}/select/${id}`) }] },
          context.baseline.pids,
        )
      : await context.load(
          { targets: [{ url: `${context.baseline.url}/list?merchant_id=${context.merchant.merchant.id}` }] },
          context.baseline.pids,
        );
  const headers = { 'x-api-key': context.merchant.api_keys.live };
  const read =
    scenario === 'get'
      ? await context.load({
          targets: [
            { url: `${context.base_url}/v1/payments/x`, headers, paths: ids.map((id) => `/v1/payments/${id}`) },
          ],
        })
      : await context.load({ targets: [{ url: `${context.base_url}/v1/payments?limit=25`, headers }] });
  return [
    httpRow(
      scenario,
      scenario === 'get' ? 'GET /v1/payments/{id}' : 'GET /v1/payments?limit=25',
      read,
      {
        figure: bareName(context, scenario === 'get' ? 'SELECT by id' : 'SELECT of 25 rows'),
        result: baseline,
      },
      { target: scenario === 'get' ? '>= 1.0x' : '>= 0.7x' },
    ),
  ];
}

/** In-process ledger transfers (no HTTP: the ledger port as the gateway calls it), beside a one-row insert. */
async function ledgerRows(context: BenchContext): Promise<Row[]> {
  const { db } = context.database;
  const ledger = context.application.ledger;
  const concurrency = context.connections;
  const account_count = 1024;
  const names = Array.from({ length: account_count }, (_, i) =>
    accounts.merchantAvailable(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, false),
  );
  for (let start = 0; start < account_count; start += 256) {
    await ledger.transferBatch(
      names.slice(start, start + 256).map((name, i) => ({
        key: `bench-fund-${start + i}`,
        kind: 'mint',
        debit_account: accounts.world(false),
        credit_account: name,
        amount_micro_pay: 1_000_000_000_000,
      })),
    );
  }
  await sql`create table if not exists bench_ledger_rows (id bigserial primary key, key text not null, amount bigint not null, created_at timestamptz not null default now())`.execute(
    db,
  );
  const baseline = await timedLoop(context.seconds, concurrency, (_, index) =>
    sql`insert into bench_ledger_rows (key, amount) values (${`b-${index}`}, ${index})`.execute(db),
  );
  // each loop moves PAY among its own accounts, so transfers of different loops rarely meet on a row
  const per_loop = Math.floor(account_count / concurrency);
  const transferOf = (worker: number, index: number, prefix: string): TransferCommand => ({
    key: `${prefix}-${index}`,
    kind: 'transfer',
    debit_account: names[worker * per_loop + (index % per_loop)]!,
    credit_account:
      names[worker * per_loop + ((index * 7 + 3) % per_loop)] === names[worker * per_loop + (index % per_loop)]
        ? names[(worker * per_loop + (index % per_loop) + 1) % account_count]!
        : names[worker * per_loop + ((index * 7 + 3) % per_loop)]!,
    amount_micro_pay: 1 + (index % 100),
  });
  const single = await timedLoop(context.seconds, concurrency, (worker, index) =>
    ledger.transfer(transferOf(worker, index, 'single')),
  );
  const batch_size = 100;
  const batch_loops = 4;
  const batched = await timedLoop(context.seconds, batch_loops, (worker, index) =>
    ledger.transferBatch(
      Array.from({ length: batch_size }, (_, item) =>
        transferOf(worker * (concurrency / batch_loops), index * batch_size + item, 'batch'),
      ),
    ),
  );
  const verification = await ledger.verify();
  const base = { figure: `one-row INSERT, ${concurrency} concurrent`, per_s: baseline.per_s, p99_ms: baseline.p99_ms };
  return [
    {
      scenario: 'ledger',
      figure: `ledger transfer (in-process), ${concurrency} concurrent`,
      per_s: single.per_s,
      unit: 'transfers/s',
      p99_ms: single.p99_ms,
      baseline: base,
      ratio: single.per_s / baseline.per_s,
      target: '>= 0.5x',
      note: verification.ok ? 'ledger verify ok' : verification.problems.join('; '),
    },
    {
      scenario: 'ledger',
      figure: `ledger transferBatch x${batch_size}, ${batch_loops} concurrent`,
      per_s: batched.per_s * batch_size,
      unit: 'transfers/s',
      p99_ms: batched.p99_ms,
      baseline: base,
      ratio: (batched.per_s * batch_size) / baseline.per_s,
      target: '>= 5,000 transfers/s',
    },
  ];
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A receipt no other pending-funds row has: one accepted anywhere is a duplicate everywhere else. */
function freshReceipt() {
  return {
    receipt_base64: Buffer.concat([PNG_SIGNATURE, randomBytes(8)]).toString('base64'),
    content_type: 'image/png',
  };
}

/**
 * `total` pending-funds rows spread evenly over the receivers (row i to receiver i mod n), each with a receipt of its
 * own, and the load that confirms every one of them (as its receiver) against `base_url`.
 */
export async function confirmLoad(
  context: BenchContext,
  receivers: readonly CreatedMerchant[],
  total: number,
  prefix: string,
): Promise<(base_url: string) => LoadTarget[]> {
  const ids: string[][] = receivers.map(() => []);
  for (let from = 0; from < total; from += 8) {
    await Promise.all(
      Array.from({ length: Math.min(8, total - from) }, async (_, offset) => {
        const i = from + offset;
        const response = await context.application.app.inject({
          method: 'POST',
          url: '/internal/pending-funds',
          headers: { authorization: `Bearer ${BENCH_TOKEN}` },
          payload: {
            receiver_merchant_id: receivers[i % receivers.length]!.merchant.id,
            amount_minor: 1_000_000,
            payer_reference: `payer-${prefix}-${receivers.length}-${i}`,
            ...freshReceipt(),
          },
        });
        if (response.statusCode !== 201) throw new Error(`pending funds: ${response.statusCode} ${response.body}`);
        ids[i % receivers.length]!.push(response.json().data.id);
      }),
    );
  }
  // the tables the confirm reads have just grown by thousands of rows: plans from fresh statistics, as autovacuum
  // would give a service that has run a while
  if (context.kind === 'postgres') await sql`analyze`.execute(context.database.db);
  return (base_url) =>
    receivers.map((receiver, index) => ({
      url: `${base_url}/v1/pending-funds/x/receiver-confirm`,
      method: 'POST' as const,
      headers: { 'x-api-key': receiver.api_keys.live },
      paths: ids[index]!.map((id) => `/v1/pending-funds/${id}/receiver-confirm`),
      bodies: ids[index]!.map(() => freshReceipt()),
    }));
}

/**
 * POST /v1/pending-funds/{id}/receiver-confirm, each on its own pending-funds row (they are used up): all for one
 * receiver (every confirm credits the same account), then spread over 8 receivers (they share only the issuance
 * account their mints debit). Rows are used up, so the confirms are counted, not timed: a warm-up on rows of its own
 * first, then the measured confirms. The baseline is the bare INSERT timed and warmed like every other baseline (a
 * short cold burst of as many INSERTs would mostly measure the bare process opening its connections).
 */
async function confirmRows(context: BenchContext): Promise<Row[]> {
  const baseline = await insertBaseline(context);
  const measure = async (receiver_count: number): Promise<Row> => {
    // as many rows for each receiver: the load generator splits the requests evenly over them
    const evenly = (total: number) => total - (total % receiver_count);
    const warm = evenly(context.kind === 'pglite' ? 40 : 256);
    const count = evenly(context.kind === 'pglite' ? 200 : 1_488);
    const receivers = await Promise.all(
      Array.from({ length: receiver_count }, (_, i) =>
        createMerchant(context.application.merchants, { name: `Bench receiver ${i + 1}` }),
      ),
    );
    const confirmAll = async (targets: LoadTarget[], amount: number) => context.load({ targets, amount, warmup_s: 0 });
    const warm_targets = (await confirmLoad(context, receivers, warm, 'warm'))(context.base_url);
    const targets = (await confirmLoad(context, receivers, count, 'measured'))(context.base_url);
    await confirmAll(warm_targets, warm);
    const confirm = await confirmAll(targets, count);
    const figure = `receiver-confirm, ${count} rows${receiver_count > 1 ? ` over ${receiver_count} receivers` : ''}`;
    return httpRow(
      'confirm',
      figure,
      confirm,
      { figure: bareName(context, 'INSERT'), result: baseline },
      { target: '>= 0.7x' },
    );
  };
  return [await measure(1), await measure(8)];
}

/**
 * What a create costs beside what its batch costs: the one-seller create with batches capped at 2, 4, 8 and 16 creates
 * and uncapped, each beside the bare INSERT of the run. The CPU per create of the api process and of PostgreSQL,
 * against one over the mean batch size, is fitted by least squares as `per create + per batch / batch size`: the
 * part no batch size removes, and what one more create per batch saves.
 */
async function batchCostRows(context: BenchContext): Promise<Row[]> {
  await onlySellers(context, 1);
  const batcher = context.application.payments.create_batcher;
  if (!(batcher instanceof PaymentCreateBatcher))
    return [{ scenario: 'batch_cost', figure: 'batch cost', per_s: 0, unit: '-', note: 'no batching allocator' }];
  const baseline = await insertBaseline(context);
  const uncapped = batcher.max_batch;
  const rows: Row[] = [];
  const points: { inverse: number; api: number; db: number }[] = [];
  try {
    for (const cap of [2, 4, 8, 16, uncapped]) {
      batcher.max_batch = cap;
      const before = batcherStats(context)!;
      const result = await context.load({
        targets: [tradeTarget(context)],
      });
      const after = batcherStats(context)!;
      const row = httpRow(
        'batch_cost',
        `POST /v1/trades, 1 seller, batches of at most ${cap}`,
        result,
        { figure: bareName(context, 'INSERT'), result: baseline },
        { note: batchNote(before, after) },
      );
      rows.push(row);
      const size = (after.batched - before.batched) / Math.max(1, after.batches - before.batches);
      if (row.cpu && size > 0) points.push({ inverse: 1 / size, api: row.cpu.api_us, db: row.cpu.db_us });
    }
  } finally {
    batcher.max_batch = uncapped;
  }
  const fit = (value: (point: (typeof points)[number]) => number) => {
    const mean_x = points.reduce((sum, point) => sum + point.inverse, 0) / points.length;
    const mean_y = points.reduce((sum, point) => sum + value(point), 0) / points.length;
    const covariance = points.reduce((sum, point) => sum + (point.inverse - mean_x) * (value(point) - mean_y), 0);
    const variance = points.reduce((sum, point) => sum + (point.inverse - mean_x) ** 2, 0);
    const per_batch = variance > 0 ? covariance / variance : 0;
    return { per_create: mean_y - per_batch * mean_x, per_batch };
  };
  if (points.length >= 2) {
    const api = fit((point) => point.api);
    const db = fit((point) => point.db);
    const bare = rows[0]?.baseline?.cpu;
    const us = (value: number) => Math.round(value).toLocaleString('en');
    rows.push({
      scenario: 'batch_cost',
      figure: 'CPU us per create = per create + per batch / batch size (least squares)',
      per_s: 0,
      unit: '-',
      note: `api process ${us(api.per_create)} + ${us(api.per_batch)}/n, PostgreSQL ${us(db.per_create)} + ${us(db.per_batch)}/n${bare ? `; the bare INSERT: api ${us(bare.api_us)}, PostgreSQL ${us(bare.db_us)} per request` : ''}`,
    });
  }
  return rows;
}

/** The sell/buy matcher over a book inserted in bulk, beside the bare ledger mints it makes (one per pair). */
async function matcherRows(context: BenchContext): Promise<Row[]> {
  const { db } = context.database;
  const orders = context.kind === 'pglite' ? 500 : 2000;
  const batch_size = 200;
  const deps = context.application.merchants;
  const seller_id = (await createMerchant(deps, { name: 'Bench sell side' })).merchant.id;
  const buyer_id = (await createMerchant(deps, { name: 'Bench buy side' })).merchant.id;
  const started_at = Date.now() - orders * 10;
  await sql`
    insert into sell_orders (id, merchant_id, is_sandbox, status, amount_micro_pay, currency, target_currency, target_fiat_amount, expires_at, created_at)
    select gen_random_uuid(), ${seller_id}::uuid, false, 'pending', ((i % 5) + 1) * 1000000, 'PAY', case when i % 2 = 0 then 'THB' else 'AUD' end, 3500,
      now() + interval '1 day', to_timestamp((${started_at}::bigint + i * 5) / 1000.0)
    from generate_series(1, ${orders}) as i`.execute(db);
  await sql`
    insert into buy_orders (id, merchant_id, is_sandbox, status, amount_micro_pay, fiat_currency, fiat_amount, expires_at, created_at)
    select gen_random_uuid(), ${buyer_id}::uuid, false, 'pending', ((i % 5) + 1) * 1000000, case when i % 2 = 0 then 'THB' else 'AUD' end, 3500,
      now() + interval '1 day', to_timestamp((${started_at}::bigint + ((i * 7919) % ${orders}) * 5 + 1) / 1000.0)
    from generate_series(1, ${orders}) as i`.execute(db);
  await sql`analyze`.execute(db);
  const application = context.application as unknown as { payouts: { matcher: Parameters<typeof runMatcher>[0] } };
  const matcher = { ...application.payouts.matcher, batch_size, onMatched: undefined, metrics: undefined };
  const match_start = performance.now();
  let pairs = 0;
  for (;;) {
    const done = await runMatcher(matcher);
    pairs += done;
    if (done === 0) break;
  }
  const match_seconds = (performance.now() - match_start) / 1000;
  const mint_start = performance.now();
  for (let done = 0; done < pairs; done += batch_size) {
    await db.transaction().execute(async (trx) => {
      for (let i = done; i < Math.min(pairs, done + batch_size); i++) {
        await context.application.ledger.transfer(
          {
            key: `bench-mint-${i}`,
            kind: 'mint',
            debit_account: accounts.mintSource('bench', false),
            credit_account: accounts.merchantAvailable(buyer_id, false),
            amount_micro_pay: 1_000_000,
          },
          { trx },
        );
      }
    });
  }
  const mint_seconds = (performance.now() - mint_start) / 1000;
  return [
    {
      scenario: 'matcher',
      figure: `matcher, ${orders} sells x ${orders} buys, batch ${batch_size}`,
      per_s: pairs / match_seconds,
      unit: 'pairs/s',
      baseline: { figure: 'bare ledger mints, same transaction size', per_s: pairs / mint_seconds },
      ratio: mint_seconds / match_seconds,
      target: '>= 2,000 pairs/s',
      note: `${pairs} pairs`,
    },
  ];
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;

/** The row of a scenario that runs on PostgreSQL only, on a PGlite run. */
function needsPostgres(scenario: string, figure: string, why: string): Row[] {
  return [{ scenario, figure, per_s: 0, unit: '-', note: `skipped: needs PostgreSQL (${why})` }];
}

/**
 * Sandbox simulate -> the `payment.completed` webhook's arrival at a loopback receiver, with 1 and 2 worker
 * processes, and with 2 workers while another merchant's endpoint answers in 5 s (its simulations run beside).
 * PostgreSQL only: the workers are separate processes on the same database. Every wait is bounded (a simulate, a
 * webhook, the figure, a worker's exit): a dispatcher that stops delivering fails the figure with a note.
 */
async function webhookRows(context: BenchContext): Promise<Row[]> {
  if (!context.database_url) return needsPostgres('webhooks', 'webhook arrival', 'worker processes share the database');
  const waiting = new Map<string, (at_ms: number) => void>();
  const arrived = new Map<string, number>();
  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const at_ms = performance.now();
      const slow = request.url?.startsWith('/slow');
      const reply = () => response.writeHead(200).end('ok');
      if (slow) setTimeout(reply, 5_000);
      else reply();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; payment_id?: string };
        if (process.env['BENCH_WORKER_LOG'])
          process.stderr.write(`webhook ${request.url} ${body.type} ${body.payment_id}\n`);
        if (!slow && body.type === 'payment.completed' && body.payment_id) {
          // the webhook may arrive before the simulate response is read: keep the time for the waiter
          const waiter = waiting.get(body.payment_id);
          if (waiter) waiter(at_ms);
          else arrived.set(body.payment_id, at_ms);
        }
      } catch {
        // not ours
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;
  const deps = context.application.merchants;
  // sandbox endpoints: a loopback receiver is allowed only there (the SSRF guard)
  const receiverMerchant = async (name: string, path: string) => {
    const merchant = await createMerchant(deps, { name });
    const response = await fetch(`${context.base_url}/v1/webhook-endpoint`, {
      method: 'PUT',
      headers: { 'x-api-key': merchant.api_keys.sandbox, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${port}${path}` }),
    });
    if (!response.ok) throw new Error(`webhook endpoint: ${response.status} ${await response.text()}`);
    return merchant;
  };
  const fast = await receiverMerchant('Bench fast receiver', '/fast');
  const slow = await receiverMerchant('Bench slow receiver', '/slow');
  const simulate = (key: string, timeout_ms: number) =>
    fetch(`${context.base_url}/v1/sandbox/payments/simulate`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: '{"scenario":"matched_then_completed"}',
      signal: AbortSignal.timeout(timeout_ms),
    });
  /**
   * ms from the simulate response to the arrival; undefined when the simulate failed or no webhook came within
   * `wait_ms` (at most 30 s): counted, never fatal, never a wait without end.
   */
  const simulateOnce = async (wait_ms: number): Promise<number | undefined> => {
    let id: string;
    let answered_ms: number;
    try {
      const response = await simulate(fast.api_keys.sandbox, Math.max(1, Math.min(WEBHOOK_WAIT_MS, wait_ms)));
      answered_ms = performance.now();
      id = ((await response.json()) as { data: { payment: { id: string } } }).data.payment.id;
    } catch {
      // a simulate that failed (a reset connection under load, a timeout) is counted like a webhook that never came
      return undefined;
    }
    const early = arrived.get(id);
    arrived.delete(id);
    const arrived_ms =
      early ??
      (await new Promise<number | undefined>((resolve) => {
        const timer = setTimeout(
          () => resolve(undefined),
          Math.max(0, Math.min(WEBHOOK_WAIT_MS, wait_ms - (performance.now() - answered_ms))),
        );
        waiting.set(id, (at) => {
          clearTimeout(timer);
          resolve(at);
        });
      }));
    waiting.delete(id);
    if (arrived_ms === undefined) return undefined;
    // an arrival before the response was read counts as 0 ms (it beat the response)
    return Math.max(0, arrived_ms - answered_ms);
  };
  const startWorker = (): ChildProcess =>
    spawn(process.execPath, [new URL('../src/main.ts', import.meta.url).pathname], {
      env: {
        ...process.env,
        ...context.env,
        ROLES: 'worker',
        ...(process.env['BENCH_WORKER_LOG'] ? { LOG_LEVEL: 'info' } : {}),
      },
      stdio: ['ignore', process.env['BENCH_WORKER_LOG'] ? 'inherit' : 'ignore', 'inherit'],
    });
  const simulations = Math.max(50, context.seconds * 40);
  // A figure ends by this deadline whatever happens (about 6x what a healthy run takes), and after
  // WEBHOOK_LOST_IN_A_ROW lost webhooks in a row (the dispatcher has stopped): the rest is reported as not run.
  const deadline_ms = Math.max(60_000, simulations * 300);

  async function measure(workers: number, slow_endpoint: boolean): Promise<Row> {
    const processes = Array.from({ length: workers }, startWorker);
    let exited = '';
    for (const child of processes)
      child.once('exit', (code, signal) => (exited ||= `a worker process exited (${signal ?? code})`));
    let slow_running = slow_endpoint;
    const slow_loop = (async () => {
      while (slow_running) {
        await simulate(slow.api_keys.sandbox, 10_000).then(
          (r) => r.arrayBuffer(),
          () => undefined,
        );
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const figure = `simulate -> webhook arrival, ${workers} worker${workers > 1 ? 's' : ''}${slow_endpoint ? ', another merchant answers in 5 s' : ''}`;
    const ends_at = performance.now() + deadline_ms;
    const left = () => ends_at - performance.now();
    try {
      for (let warm = 0; warm < 10 && left() > 0 && !exited; warm++) await simulateOnce(left());
      const latencies: number[] = [];
      const started = performance.now();
      let lost = 0;
      let lost_in_a_row = 0;
      let run = 0;
      let stopped = '';
      for (; run < simulations; run++) {
        if (exited) stopped = exited;
        else if (left() <= 0) stopped = `the figure's ${deadline_ms / 1000} s deadline passed`;
        else if (lost_in_a_row >= WEBHOOK_LOST_IN_A_ROW) stopped = `${lost_in_a_row} webhooks in a row did not arrive`;
        if (stopped) break;
        const latency = await simulateOnce(left());
        if (latency === undefined) {
          lost++;
          lost_in_a_row++;
        } else {
          latencies.push(latency);
          lost_in_a_row = 0;
        }
      }
      const seconds = (performance.now() - started) / 1000;
      latencies.sort((a, b) => a - b);
      const notes = ['rss is the largest worker process'];
      if (lost)
        notes.push(
          `${lost} simulation(s) failed or their webhook did not arrive within ${WEBHOOK_WAIT_MS / 1000} s (left out of the percentiles)`,
        );
      if (stopped) notes.push(`failed: stopped after ${run} of ${simulations} simulations: ${stopped}`);
      return {
        scenario: 'webhooks',
        figure,
        per_s: run / seconds,
        unit: 'sims/s (sequential)',
        p50_ms: percentile(latencies, 50),
        p99_ms: percentile(latencies, 99),
        ...(slow_endpoint ? { target: 'p99 < 50 ms for the other merchants' } : {}),
        failures: lost + (simulations - run),
        rss_mb: Math.max(...processes.map(rssOfChild)),
        note: notes.join('; '),
      };
    } finally {
      slow_running = false;
      await slow_loop;
      await Promise.all(processes.map(stopChild));
    }
  }

  try {
    return [await measure(1, false), await measure(2, false), await measure(2, true)];
  } finally {
    receiver.closeAllConnections();
    receiver.close();
  }
}

/** How long the bench waits for one webhook, and how many lost in a row end a figure. */
const WEBHOOK_WAIT_MS = 30_000;
const WEBHOOK_LOST_IN_A_ROW = 3;

/** SIGTERM, then SIGKILL if the process has not exited within 15 s (a worker drains its sends first). */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** An api process's batching allocator counters (bench/api-process.ts answers 'stats'). */
function statsOf(child: ChildProcess): Promise<CreateBatcherStats | undefined> {
  return new Promise((resolve) => {
    const answer = (message: { stats?: CreateBatcherStats }) => {
      if (!('stats' in message)) return;
      child.off('message', answer);
      resolve(message.stats);
    };
    child.on('message', answer);
    child.send('stats');
  });
}

export function rssOfChild(child: ChildProcess): number {
  try {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** Create through 1 and then 2 api processes (children) on the same PostgreSQL database, one seller. */
async function scaleRows(context: BenchContext): Promise<Row[]> {
  if (!context.database_url) return needsPostgres('scale', '2 api processes / 1', 'processes share the database');
  await onlySellers(context, 1);
  const startApi = async (): Promise<{ child: ChildProcess; url: string }> => {
    const child = fork(new URL('./api-process.ts', import.meta.url).pathname, [], {
      env: { ...process.env, ...context.env, ROLES: 'api' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      child.once('message', (message: { url: string }) => resolve(message.url));
      child.once('exit', (code) => reject(new Error(`api process exited with ${code}`)));
    });
    return { child, url };
  };
  const target = (url: string) => ({
    url: `${url}/v1/trades`,
    method: 'POST' as const,
    headers: { 'x-api-key': context.merchant.api_keys.live },
    body: TRADE,
    unique_field: 'order_id',
  });
  const first = await startApi();
  const second = await startApi();
  try {
    const start = await statsOf(first.child);
    const one = await context.load({ targets: [target(first.url)] }, [first.child.pid!]);
    const between = [await statsOf(first.child), await statsOf(second.child)] as const;
    const two = await context.load({ targets: [target(first.url), target(second.url)] }, [
      first.child.pid!,
      second.child.pid!,
    ]);
    const end = [await statsOf(first.child), await statsOf(second.child)] as const;
    return [
      {
        scenario: 'scale',
        figure: 'POST /v1/trades through 1 api process',
        per_s: one.requests_per_s,
        unit: 'req/s',
        p50_ms: one.p50_ms,
        p99_ms: one.p99_ms,
        failures: one.non_2xx + one.errors,
        cpu: perRequest(one.cpu, one.total + one.warmup_total),
        note: batchNote(start, between[0]),
      },
      httpRow(
        'scale',
        'POST /v1/trades through 2 api processes',
        two,
        { figure: 'the same through 1 api process', result: one },
        {
          target: '>= 1.3x',
          rss_mb: Math.max(rssOfChild(first.child), rssOfChild(second.child)),
          note: `rss is the larger api process; first: ${batchNote(between[0], end[0])}; second: ${batchNote(between[1], end[1])}`,
        },
      ),
    ];
  } finally {
    // stopped before the bench drops the database, which would cut their connections
    await Promise.all([stopChild(first.child), stopChild(second.child)]);
  }
}

export const SCENARIOS: Record<string, (context: BenchContext) => Promise<Row[]>> = {
  create1: (context) => createRows(context, 'create1', 1, true),
  trade1: (context) => createRows(context, 'trade1', 1),
  create8: (context) => createRows(context, 'create8', 8),
  create0: (context) => createRows(context, 'create0', 0),
  create_deep: (context) => createRows(context, 'create_deep', 1, false, 5_000),
  get: (context) => readRows(context, 'get'),
  list: (context) => readRows(context, 'list'),
  ledger: ledgerRows,
  confirm: confirmRows,
  matcher: matcherRows,
  webhooks: webhookRows,
  scale: scaleRows,
  batch_cost: batchCostRows,
};

/** Names that stand for several scenarios. */
export const ALIASES: Record<string, string[]> = {
  create: ['create1', 'create8', 'create0', 'create_deep'],
  reads: ['get', 'list'],
  all: Object.keys(SCENARIOS).filter((name) => name !== 'trade1'),
};

/** The issue's target rows: `./run bench` runs these on PostgreSQL and then the create on PGlite, three times each. */
export const TARGETS = { postgres: ['trade1', 'get', 'list', 'confirm'], pglite: ['trade1'] };
