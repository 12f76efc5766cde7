/**
 * Webhook latency: time from the sandbox simulate response to the webhook's arrival at a local receiver, p50/p99 over
 * SIMULATIONS sequential simulations, with one and with two worker processes (ROLES=worker, woken by LISTEN/NOTIFY).
 * PostgreSQL only (several processes share the database). Prints figures; never fails on speed.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/webhooks.ts [SIMULATIONS=500]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { createApplication } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { createMerchant } from '../src/modules/merchants/service.ts';
import { setDefaultEndpoint } from '../src/modules/webhooks/endpoints.ts';

const server_url = process.env['DATABASE_URL'];
if (!server_url) {
  process.stderr.write('bench/webhooks.ts needs DATABASE_URL (PostgreSQL): worker processes share the database\n');
  process.exit(2);
}
const SIMULATIONS = Number(process.argv[2] ?? 500);
const TOKEN = 'bench-admin-token-0123456789abcdef';

const name = `mpay_bench_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: server_url });
await admin.connect();
await admin.query(`create database ${name}`);
const url = new URL(server_url);
url.pathname = `/${name}`;
const database_url = url.toString();

// The receiver: records when each payment's last webhook arrives.
const waiting = new Map<string, (at_ms: number) => void>();
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const at_ms = performance.now();
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; payment_id?: string };
    response.writeHead(200).end('ok');
    if (body.type === 'payment.completed' && body.payment_id) waiting.get(body.payment_id)?.(at_ms);
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiver_url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

const database = await openDatabase({ database_url, data_dir: '' });
await migrateToLatest(database.db);
const config = loadConfig({
  DATABASE_URL: database_url,
  ROLES: 'api',
  LOG_LEVEL: 'silent',
  ADMIN_SERVICE_TOKEN: TOKEN,
  INTERNAL_SERVICE_TOKEN: TOKEN,
  RATE_LIMIT_SANDBOX_PER_SECOND: '100000',
});
const application = await createApplication({ config, database });
const base = await application.app.listen({ port: 0, host: '127.0.0.1' });
const merchant = await createMerchant({ db: database.db, clock: application.clock, secrets: application.secrets.secrets, webhooks: application.webhooks.deps }, { name: 'Bench' });
// Sandbox events go to sandbox endpoints only (webhook endpoints are per mode); loopback is allowed there.
await setDefaultEndpoint(application.webhooks.deps, { merchant_id: merchant.merchant.id, is_sandbox: true }, receiver_url);
const key = merchant.api_keys.sandbox;

function startWorker(): ChildProcess {
  return spawn(process.execPath, [new URL('../src/main.ts', import.meta.url).pathname], {
    env: { ...process.env, DATABASE_URL: database_url, ROLES: 'worker', LOG_LEVEL: 'silent', ADMIN_SERVICE_TOKEN: TOKEN, INTERNAL_SERVICE_TOKEN: TOKEN },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** One simulation: resolves to [ms from response to the payment.completed webhook]. */
async function simulateOnce(): Promise<number> {
  const response = await fetch(`${base}/v1/sandbox/payments/simulate`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: '{"scenario":"matched_then_completed"}' });
  const body = (await response.json()) as { data: { payment: { id: string } } };
  const answered_ms = performance.now();
  const id = body.data.payment.id;
  const arrived_ms = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no webhook for ${id} in 30 s`)), 30_000);
    waiting.set(id, (at) => (clearTimeout(timer), resolve(at)));
  });
  waiting.delete(id);
  return arrived_ms - answered_ms;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function run(workers: number): Promise<void> {
  const processes = Array.from({ length: workers }, startWorker);
  try {
    for (let warm = 0; warm < 20; warm++) await simulateOnce(); // workers started, connections warm
    const latencies: number[] = [];
    const started = performance.now();
    for (let i = 0; i < SIMULATIONS; i++) latencies.push(await simulateOnce());
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const mean = latencies.reduce((sum, ms) => sum + ms, 0) / latencies.length;
    process.stdout.write(
      `${workers} worker process${workers > 1 ? 'es' : ''}: ${SIMULATIONS} simulations, simulate response -> payment.completed webhook (2nd event): ` +
        `p50 ${percentile(latencies, 50).toFixed(1)} ms, p90 ${percentile(latencies, 90).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, ` +
        `max ${latencies.at(-1)!.toFixed(1)} ms, mean ${mean.toFixed(1)} ms; under 100 ms: ${((latencies.filter((ms) => ms < 100).length / latencies.length) * 100).toFixed(1)} %; ` +
        `${(SIMULATIONS / seconds).toFixed(0)} simulations/s sequential\n`,
    );
  } finally {
    for (const child of processes) child.kill('SIGTERM');
    await Promise.all(processes.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)))));
  }
}

try {
  await run(1);
  await run(2);
  const duplicates = await database.db
    .selectFrom('webhook_deliveries')
    .select((eb) => [eb.fn.countAll<string>().as('deliveries'), eb.fn.sum<string>('attempt_count').as('attempts')])
    .executeTakeFirstOrThrow();
  process.stdout.write(`deliveries ${duplicates.deliveries}, attempts ${duplicates.attempts} (equal: no event sent twice)\n`);
} finally {
  await application.close();
  await database.close();
  receiver.close();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
}
