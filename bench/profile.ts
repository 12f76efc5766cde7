/**
 * `./run bench:profile [--loads create,read,list,confirm] [--seconds 10] [--connections 32] [--roles api,worker,ledger]
 *   [--out bench/profiles/<name>]`
 *
 * Where a request's CPU goes: the create (`POST /v1/trades`, one seller), the read (`GET /v1/payments/{id}`), the
 * list (`GET /v1/payments?limit=25`) and the receiver-confirm (each on its own pending-funds row, over 8 receivers;
 * rows are used up, so a fixed count after a warm-up on rows of its own), each served by an api process of its own, CPU-profiled (V8's sampling
 * profiler, as `--cpu-prof`, started after the warm-up and stopped at the end of the measured run) under the same
 * load as the bench (autocannon in its own process, 32 connections, PostgreSQL). For each it writes the CPU profile
 * (`<load>.cpuprofile`, open it in Chrome's DevTools) and prints, per request: the api process's CPU by layer (from
 * the profile, bench/layers.ts) and in all (from /proc), PostgreSQL's backends' CPU, and every statement the api
 * process sent (calls, rows and time to answer per request). pg_stat_statements needs the server's
 * shared_preload_libraries, so the statements are counted at the driver. Writes `summary.md` beside the profiles.
 * The profiled process has every role by default, as `./run start` runs the service (its dispatcher hears each NOTIFY).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { openBenchContext } from './context.ts';
import { cpuByLayer, LAYERS, topFunctions, type CpuProfile, type Layer } from './layers.ts';
import type { LoadTarget } from './load.ts';
import { createMerchant } from '../src/modules/merchants/service.ts';
import { confirmLoad, onlySellers, paymentPaths, stopChild, TRADE } from './scenarios.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    out: { type: 'string' },
    roles: { type: 'string', default: 'api,worker,ledger' },
    loads: { type: 'string', default: 'create,read,list,confirm' },
  },
});
const out = values.out ?? `bench/profiles/${new Date().toISOString().replace(/[:.]/g, '-')}`;
mkdirSync(out, { recursive: true });

const context = await openBenchContext({
  pglite: false,
  connections: Number(values.connections),
  seconds: Number(values.seconds),
});

interface Statement {
  text: string;
  calls: number;
  ms: number;
  rows: number;
}
interface Measured {
  load: string;
  requests: number;
  requests_per_s: number;
  p99_ms: number;
  failures: number;
  api_us: number;
  db_us: number;
  layers: Map<Layer, number>;
  top: { name: string; us: number }[];
  statements: Statement[];
}

function ask<T>(child: ChildProcess, message: string | object, field: string): Promise<T> {
  return new Promise((resolve) => {
    const answer = (reply: Record<string, unknown>) => {
      if (!(field in reply)) return;
      child.off('message', answer);
      resolve(reply[field] as T);
    };
    child.on('message', answer);
    child.send(message as never);
  });
}

/** `targets` gives the load against the api process's address; a fixed-count load brings its own warm-up targets. */
interface Load {
  targets: (url: string) => LoadTarget[];
  warm?: { targets: (url: string) => LoadTarget[]; amount: number };
  amount?: number;
}

async function measure(load: string, { targets, warm, amount }: Load): Promise<Measured> {
  const child = fork(new URL('./api-process.ts', import.meta.url).pathname, [], {
    env: { ...process.env, ...context.env, ROLES: values.roles, BENCH_STATEMENTS: '1' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message: { url: string }) => resolve(message.url));
    child.once('exit', (code) => reject(new Error(`api process exited with ${code}`)));
  });
  try {
    // the warm-up's statements are dropped and it is not profiled: the profile covers the measured run only
    await context.load(
      warm
        ? { targets: warm.targets(url), amount: warm.amount, warmup_s: 0 }
        : { targets: targets(url), duration_s: 2, warmup_s: 0 },
      [child.pid!],
    );
    await ask(child, 'statements', 'statements');
    await ask(child, 'profile-start', 'profiling');
    const run = await context.load({ targets: targets(url), warmup_s: 0, ...(amount ? { amount } : {}) }, [child.pid!]);
    await ask(child, { profile_stop: `${out}/${load}.cpuprofile` }, 'profiled');
    const statements = await ask<Statement[]>(child, 'statements', 'statements');
    await stopChild(child);
    const profile = JSON.parse(readFileSync(`${out}/${load}.cpuprofile`, 'utf8')) as CpuProfile;
    const all = [...cpuByLayer(profile).values()].reduce((sum, us) => sum + us, 0);
    // the profile's busy time per layer, scaled to the process's CPU per request of the measured run (/proc)
    const api_us = (run.cpu.api_s * 1e6) / run.total;
    const profiled_share = new Map([...cpuByLayer(profile)].map(([layer, us]) => [layer, (us / all) * api_us]));
    return {
      load,
      requests: run.total,
      requests_per_s: run.requests_per_s,
      p99_ms: run.p99_ms,
      failures: run.non_2xx + run.errors,
      api_us,
      db_us: (run.cpu.db_s * 1e6) / run.total,
      layers: profiled_share,
      top: topFunctions(profile, 20).map(({ name, us }) => ({ name, us: (us / all) * api_us })),
      statements: statements.sort((a, b) => b.calls - a.calls),
    };
  } finally {
    await stopChild(child);
  }
}

const results: Measured[] = [];
const loads = new Set(values.loads.split(','));
try {
  await onlySellers(context, 1);
  const headers = { 'x-api-key': context.merchant.api_keys.live };
  if (loads.has('create'))
    results.push(
      await measure('create', {
        targets: (url) => [{ url: `${url}/v1/trades`, method: 'POST', headers, body: TRADE, unique_field: 'order_id' }],
      }),
    );
  if (loads.has('read')) {
    const ids = await paymentPaths(context);
    results.push(
      await measure('read', {
        targets: (url) => [{ url: `${url}/v1/payments/x`, headers, paths: ids.map((id) => `/v1/payments/${id}`) }],
      }),
    );
  }
  if (loads.has('list'))
    results.push(await measure('list', { targets: (url) => [{ url: `${url}/v1/payments?limit=25`, headers }] }));
  if (loads.has('confirm')) {
    const receivers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        createMerchant(context.application.merchants, { name: `Profile receiver ${i + 1}` }),
      ),
    );
    const amount = 2_000;
    results.push(
      await measure('confirm', {
        warm: { targets: await confirmLoad(context, receivers, 400, 'warm'), amount: 400 },
        targets: await confirmLoad(context, receivers, amount, 'measured'),
        amount,
      }),
    );
  }
} finally {
  await context.close();
}

const us = (value: number) => value.toFixed(0);
const lines: string[] = [];
lines.push(
  `Profile of ${results.map((r) => r.load).join(', ')}: ${values.connections} connections, ${values.seconds} s each, PostgreSQL, one api process with --cpu-prof.`,
  '',
  `| per request | ${results.map((r) => r.load).join(' | ')} |`,
  `|---|${results.map(() => '---:').join('|')}|`,
  `| requests/s (profiling on) | ${results.map((r) => us(r.requests_per_s)).join(' | ')} |`,
  `| p99 ms | ${results.map((r) => r.p99_ms.toFixed(0)).join(' | ')} |`,
  `| failures | ${results.map((r) => r.failures).join(' | ')} |`,
  `| **api process CPU us (/proc)** | ${results.map((r) => `**${us(r.api_us)}**`).join(' | ')} |`,
);
for (const layer of LAYERS)
  lines.push(`| ${layer} | ${results.map((r) => us(r.layers.get(layer) ?? 0)).join(' | ')} |`);
lines.push(
  `| **PostgreSQL backends CPU us** | ${results.map((r) => `**${us(r.db_us)}**`).join(' | ')} |`,
  `| statements sent | ${results.map((r) => (r.statements.reduce((sum, s) => sum + s.calls, 0) / r.requests).toFixed(2)).join(' | ')} |`,
);
for (const result of results) {
  lines.push('', `Statements per ${result.load} request (calls, rows, ms to answer, all per request):`, '');
  for (const statement of result.statements.slice(0, 12))
    lines.push(
      `- ${(statement.calls / result.requests).toFixed(3)} calls, ${(statement.rows / result.requests).toFixed(2)} rows, ${(statement.ms / result.requests).toFixed(3)} ms: \`${statement.text.slice(0, 140)}\``,
    );
  lines.push('', `Top functions by self time in the ${result.load} profile (us per request):`, '');
  for (const top of result.top) lines.push(`- ${us(top.us)} ${top.name}`);
}
const summary = `${lines.join('\n')}\n`;
writeFileSync(`${out}/summary.md`, summary);
console.log(summary);
console.log(`profiles and summary in ${out}`);
