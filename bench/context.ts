/**
 * The bench's server side: its own database (a fresh PostgreSQL database, dropped at the end, or PGlite in
 * memory), the real application (roles api and ledger unless asked for others), and the baseline endpoints registered only here
 * (one bare INSERT, one bare SELECT by id) so every figure has a baseline through the same server and pool.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pino from 'pino';
import { createApplication, type Application } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import type { DatabaseHandle } from '../src/db/database.ts';
import { openScratchDatabase } from '../src/db/scratch.ts';
import { createMerchant, type CreatedMerchant } from '../src/modules/merchants/service.ts';
import { countCpu, type CpuSpent } from './cpu.ts';
import type { LoadJob, LoadResult } from './load.ts';

export const BENCH_TOKEN = 'bench-token-0123456789abcdef0123';

export interface BenchContext {
  kind: 'postgres' | 'pglite';
  database: DatabaseHandle;
  /** Set on PostgreSQL: other processes (api, workers) connect to the same database. */
  database_url: string | undefined;
  application: Application;
  base_url: string;
  merchant: CreatedMerchant;
  env: Record<string, string>;
  /**
   * The bare baseline endpoints (`POST <url>/insert`, `GET <url>/select/<id>`, `GET <url>/list?merchant_id=<id>`):
   * on PostgreSQL a process of its own (bench/bare.ts: node:http and pg, pool of 20), whose CPU `pids` counts; on
   * PGlite, which lives inside the application's process, routes of the bench's server.
   */
  baseline: { url: string; pids: number[]; kind: 'process' | 'in-server' };
  /** Runs a load; `api_pids` are the processes serving it (default: this one), whose CPU counts as the api's. */
  load(
    job: Omit<LoadJob, 'connections' | 'duration_s' | 'warmup_s'> & Partial<LoadJob>,
    api_pids?: number[],
  ): Promise<LoadResult & { cpu: CpuSpent }>;
  connections: number;
  seconds: number;
  close(): Promise<void>;
}

export async function openBenchContext(options: {
  pglite: boolean;
  connections: number;
  seconds: number;
  /** The application's ROLES (default api,ledger). */
  roles?: string;
}): Promise<BenchContext> {
  // A fresh database of the bench's own, migrated here (not from the tests' template), dropped on close.
  const server_url = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const database = await openScratchDatabase({
    server_url: options.pglite ? undefined : server_url,
    prefix: 'mpay_bench',
    template: false,
  });
  const database_url = database.url;
  const env: Record<string, string> = {
    ...(database_url ? { DATABASE_URL: database_url } : {}),
    ROLES: options.roles ?? 'api,ledger',
    LOG_LEVEL: 'silent',
    ADMIN_SERVICE_TOKEN: BENCH_TOKEN,
    INTERNAL_SERVICE_TOKEN: BENCH_TOKEN,
    RATE_LIMIT_LIVE_PER_SECOND: '1000000',
    RATE_LIMIT_SANDBOX_PER_SECOND: '1000000',
    LEDGER_MINT_SOURCE_ACCOUNT: 'treasury',
    // the webhooks scenario's receiver listens on loopback
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  };
  const application = await createApplication({ config: loadConfig(env), database, logger: pino({ level: 'silent' }) });
  const { db } = database;
  await sql`create table bench_rows (id uuid primary key, order_id text not null, amount_minor bigint not null, created_at timestamptz not null)`.execute(
    db,
  );
  registerBaselines(application);
  const base_url = await application.app.listen({ port: 0, host: '127.0.0.1' });
  const merchant = await createMerchant(application.merchants, { name: 'Bench' });
  const bare = database_url ? await startBare(database_url) : undefined;

  const loader: ChildProcess = fork(new URL('./load.ts', import.meta.url).pathname, [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let pending: { resolve: (result: LoadResult) => void; reject: (error: Error) => void } | undefined;
  loader.on('message', (message: { ok: boolean; result?: LoadResult; error?: string }) => {
    const waiter = pending;
    pending = undefined;
    if (message.ok) waiter?.resolve(message.result!);
    else waiter?.reject(new Error(message.error));
  });

  return {
    kind: database.kind,
    database,
    database_url,
    application,
    base_url,
    merchant,
    env,
    baseline: bare
      ? { url: bare.url, pids: [bare.child.pid!], kind: 'process' }
      : { url: `${base_url}/bench`, pids: [process.pid], kind: 'in-server' },
    connections: options.connections,
    seconds: options.seconds,
    async load(job, api_pids = [process.pid]) {
      const stop = countCpu({
        api: api_pids,
        load: loader.pid,
        database_name: database_url ? new URL(database_url).pathname.slice(1) : undefined,
      });
      const result = await new Promise<LoadResult>((resolve, reject) => {
        pending = { resolve, reject };
        loader.send({
          connections: options.connections,
          duration_s: options.seconds,
          warmup_s: 1,
          ...job,
        } satisfies LoadJob);
      });
      return { ...result, cpu: stop() };
    },
    async close() {
      loader.kill();
      if (bare) await stopBare(bare.child);
      await application.close();
      await database.close();
    },
  };
}

/** The bare baseline process (bench/bare.ts) on the bench's database. */
async function startBare(database_url: string): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(new URL('./bare.ts', import.meta.url).pathname, [], {
    env: { ...process.env, DATABASE_URL: database_url },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message: { url: string }) => resolve(message.url));
    child.once('exit', (code) => reject(new Error(`the bare baseline process exited with ${code}`)));
  });
  return { child, url };
}

async function stopBare(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/**
 * The in-server baselines (PGlite, which runs inside the application's process, and the scale scenario's api
 * processes): the same server, the same pool, one statement each, no authentication.
 */
export function registerBaselines(application: Application): void {
  const { db } = application.database;
  application.app.post('/bench/insert', { config: { auth: 'public', rate_limit: false } }, async (_request, reply) => {
    const id = randomUUID();
    await sql`insert into bench_rows (id, order_id, amount_minor, created_at) values (${id}, ${id}, 10000, now())`.execute(
      db,
    );
    reply.status(201);
    return { success: true, data: { id } };
  });
  application.app.get('/bench/select/:id', { config: { auth: 'public', rate_limit: false } }, async (request) => {
    const { id } = request.params as { id: string };
    const row = await sql`select * from payments where id = ${id}`.execute(db);
    return { success: true, data: row.rows[0] };
  });
  application.app.get('/bench/list', { config: { auth: 'public', rate_limit: false } }, async (request) => {
    const { merchant_id } = request.query as { merchant_id: string };
    const rows =
      await sql`select * from payments where merchant_id = ${merchant_id} and is_sandbox = false order by created_at desc, id desc limit 25`.execute(
        db,
      );
    return { success: true, data: rows.rows };
  });
}

/** Runs `work` from `concurrency` loops for `seconds`; operations per second (in this process: the in-process ledger). */
export async function timedLoop(
  seconds: number,
  concurrency: number,
  work: (worker: number, index: number) => Promise<unknown>,
): Promise<{ per_s: number; total: number; p99_ms: number }> {
  const deadline = performance.now() + seconds * 1000;
  const latencies: number[] = [];
  let index = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (performance.now() < deadline) {
        const at = performance.now();
        await work(worker, index++);
        latencies.push(performance.now() - at);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return {
    per_s: latencies.length / ((performance.now() - started) / 1000),
    total: latencies.length,
    p99_ms: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
  };
}
