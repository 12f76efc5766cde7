/**
 * A fault run against a real listening gateway on PostgreSQL: load while a table is locked (a stalled database),
 * while every backend connection is killed again and again, and while one client behind a trusted proxy floods the
 * API. Prints what each phase answered (statuses, latencies) and how fast /readyz stayed. A script, not a test.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/fault-run.ts
 */
import pg from 'pg';
import { createApplication } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { databaseTimeouts } from '../src/db/database.ts';
import { openScratchDatabase } from '../src/db/scratch.ts';

const server_url = process.env['DATABASE_URL'];
if (!server_url)
  throw new Error('set DATABASE_URL to a PostgreSQL server (the run creates and drops its own database)');
const ADMIN_TOKEN = 'fault-run-admin-token-0123456789';
const PHASE_MS = Number(process.env['FAULT_PHASE_MS'] ?? 6_000);
const CONCURRENCY = 16;

const config = loadConfig({
  LOG_LEVEL: 'silent',
  ADMIN_SERVICE_TOKEN: ADMIN_TOKEN,
  INTERNAL_SERVICE_TOKEN: 'fault-run-internal-token-0123456789',
  DATABASE_URL: server_url,
  TRUST_PROXY: 'loopback',
  RATE_LIMIT_LIVE_PER_SECOND: '1000',
  PORT: '0',
});
const database = await openScratchDatabase({ server_url, prefix: 'mpay_fault', timeouts: databaseTimeouts(config) });
const application = await createApplication({ config: { ...config, database_url: database.url }, database });
const base = await application.app.listen({ port: 0, host: '127.0.0.1' });
const admin_headers = {
  authorization: `Bearer ${ADMIN_TOKEN}`,
  'x-actor-user-id': 'fault-run',
  'x-actor-role': 'super_admin',
  'content-type': 'application/json',
};
const post = async (path: string, body: unknown, headers: Record<string, string>) =>
  (
    await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })
  ).json() as Promise<any>;
const merchant = (await post('/admin/merchants', { name: 'Fault run' }, admin_headers)).data;
const live_key: string = merchant.api_keys.live;
await post(
  '/admin/sellers',
  {
    currency: 'THB',
    payment_method: 'promptpay',
    display_name: 'S',
    liquidity_minor: 10_000_000_000,
    rate: '35.00',
    promptpay_id: '0812345678',
  },
  admin_headers,
);
const first_trade = await post(
  '/v1/trades',
  { order_id: 'fault-first', amount: '10.00', currency: 'THB', return_url: 'https://shop.example/r' },
  { 'x-api-key': live_key },
);
const payment_id: string = first_trade.data.id;
const killer = new pg.Client({ connectionString: database.url });
await killer.connect();

interface Sample {
  status: number;
  ms: number;
  kind?: string;
}

let order = 0;
/** One request of the mix: a list, a read by id, a trade (a write with matching and liquidity). */
async function mixed(client: string): Promise<Sample> {
  const started = performance.now();
  const headers = { 'x-api-key': live_key, 'x-forwarded-for': client, 'content-type': 'application/json' };
  const kind = order++ % 3;
  const response =
    kind === 0
      ? await fetch(`${base}/v1/payments?limit=5`, { headers })
      : kind === 1
        ? await fetch(`${base}/v1/payments/${payment_id}`, { headers })
        : await fetch(`${base}/v1/trades`, {
            method: 'POST',
            headers,
            body: JSON.stringify({
              order_id: `fault-${order}-${Math.random()}`,
              amount: '10.00',
              currency: 'THB',
              return_url: 'https://shop.example/r',
            }),
          });
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started, kind: ['list', 'read', 'trade'][kind] ?? '' };
}

async function load(duration_ms: number, concurrency: number, one: () => Promise<Sample>): Promise<Sample[]> {
  const samples: Sample[] = [];
  const until = performance.now() + duration_ms;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) samples.push(await one().catch(() => ({ status: 0, ms: 0 })));
    }),
  );
  return samples;
}

async function readyzProbe(duration_ms: number): Promise<Sample[]> {
  return load(duration_ms, 1, async () => {
    const started = performance.now();
    const response = await fetch(`${base}/readyz`);
    await response.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 200));
    return { status: response.status, ms: performance.now() - started - 200 };
  });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0) : 0;
}

function report(phase: string, samples: Sample[], readyz?: Sample[]): void {
  const counts: Record<string, number> = {};
  for (const sample of samples) counts[sample.status] = (counts[sample.status] ?? 0) + 1;
  const ms = samples.map((sample) => sample.ms);
  const ready = readyz
    ? `; /readyz ${readyz.length} probes, statuses ${JSON.stringify(Object.fromEntries([...new Set(readyz.map((s) => s.status))].map((s) => [s, readyz.filter((r) => r.status === s).length])))}, max ${Math.round(Math.max(...readyz.map((s) => s.ms)))} ms`
    : '';
  const by_kind = new Map<string, number>();
  for (const sample of samples)
    by_kind.set(sample.kind ?? '', Math.max(by_kind.get(sample.kind ?? '') ?? 0, sample.ms));
  if (by_kind.size > 1)
    console.log(
      `${''.padEnd(28)} slowest: ${[...by_kind].map(([kind, max]) => `${kind} ${Math.round(max)} ms`).join(', ')}`,
    );
  console.log(
    `${phase.padEnd(28)} ${samples.length} requests ${JSON.stringify(counts)}; p50 ${Math.round(percentile(ms, 50))} ms, p99 ${Math.round(percentile(ms, 99))} ms, max ${Math.round(Math.max(...ms))} ms${ready}`,
  );
}

console.log(
  `fault run: ${PHASE_MS} ms per phase, ${CONCURRENCY} concurrent clients, DB timeouts ${JSON.stringify(databaseTimeouts(config))}`,
);
{
  const [samples, readyz] = await Promise.all([
    load(PHASE_MS, CONCURRENCY, () => mixed('198.51.100.1')),
    readyzProbe(PHASE_MS),
  ]);
  report('baseline', samples, readyz);
}
{
  await killer.query('begin');
  await killer.query('lock table payments in access exclusive mode');
  const [samples, readyz] = await Promise.all([
    load(PHASE_MS, CONCURRENCY, () => mixed('198.51.100.1')),
    readyzProbe(PHASE_MS),
  ]);
  await killer.query('rollback');
  report('stall (payments locked)', samples, readyz);
}
{
  let killing = true;
  let killed = 0;
  const kills = (async () => {
    while (killing) {
      const { rows } = await killer.query<{ pid: number }>(
        'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      );
      for (const { pid } of rows) await killer.query('select pg_terminate_backend($1::int)', [pid]);
      killed += rows.length;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  const [samples, readyz] = await Promise.all([
    load(PHASE_MS, CONCURRENCY, () => mixed('198.51.100.1')),
    readyzProbe(PHASE_MS),
  ]);
  killing = false;
  await kills;
  report(`kill (${killed} backends ended)`, samples, readyz);
}
{
  const bad_key = `svc_live_${'x'.repeat(40)}`;
  let flip = 0;
  const flood = load(PHASE_MS, 64, async () => {
    const started = performance.now();
    const response =
      flip++ % 2
        ? await fetch(`${base}/v1/payments`, { headers: { 'x-api-key': bad_key, 'x-forwarded-for': '203.0.113.66' } })
        : await fetch(`${base}/v1/reference/thai-banks`, { headers: { 'x-forwarded-for': '203.0.113.66' } });
    await response.arrayBuffer();
    return { status: response.status, ms: performance.now() - started };
  });
  const [flood_samples, other] = await Promise.all([flood, load(PHASE_MS, 4, () => mixed('198.51.100.7'))]);
  report('flood: the noisy client', flood_samples);
  report('flood: another client', other);
}
{
  const [samples] = await Promise.all([load(PHASE_MS / 2, CONCURRENCY, () => mixed('198.51.100.1'))]);
  report('after', samples);
}
await killer.end();
await application.close();
await database.close();
