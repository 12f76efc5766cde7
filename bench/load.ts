/**
 * The load generator: autocannon in its own process (forked by bench/run.ts), so it never shares the server's event
 * loop. It receives one job over IPC, runs a warm-up and then the measured run, and answers a summary.
 */
import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import autocannon from 'autocannon';

export interface LoadTarget {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** JSON body; `unique_field` gets a fresh value per request (e.g. order_id). */
  body?: Record<string, unknown>;
  unique_field?: string;
  /** Paths cycled through, one per request (e.g. /v1/payments/<id>). */
  paths?: string[];
  /** JSON bodies cycled through in step with `paths`, one per request (work that takes a fresh body each time). */
  bodies?: Record<string, unknown>[];
}

export interface LoadJob {
  /** Several targets (api processes) share the connections evenly; their figures add up. */
  targets: LoadTarget[];
  connections: number;
  duration_s: number;
  warmup_s: number;
  /** Stop after this many requests instead of a duration (work that is used up, e.g. pending funds). */
  amount?: number;
}

export interface LoadResult {
  requests_per_s: number;
  p50_ms: number;
  p99_ms: number;
  total: number;
  non_2xx: number;
  errors: number;
  /** Requests of the warm-up before the measured run (the CPU counted covers both). */
  warmup_total: number;
}

function options(target: LoadTarget, connections: number, run: string): autocannon.Options {
  let counter = 0;
  let path_index = 0;
  const base = new URL(target.url);
  return {
    url: target.url,
    method: target.method ?? 'GET',
    connections,
    headers: { ...(target.body || target.bodies ? { 'content-type': 'application/json' } : {}), ...target.headers },
    requests: [
      {
        setupRequest: (request) => {
          const next = { ...request };
          const index = path_index++;
          if (target.paths?.length) next.path = target.paths[index % target.paths.length]!;
          else next.path = base.pathname + base.search;
          if (target.bodies?.length) next.body = JSON.stringify(target.bodies[index % target.bodies.length]);
          else if (target.body)
            next.body = JSON.stringify(
              target.unique_field ? { ...target.body, [target.unique_field]: `${run}-${++counter}` } : target.body,
            );
          return next;
        },
      },
    ],
  };
}

async function once(job: LoadJob, duration_s: number, amount: number | undefined, run: string): Promise<LoadResult> {
  const per_target = Math.max(1, Math.floor(job.connections / job.targets.length));
  // autocannon stamps its finish at its next one-second tick after the last response (a counted run's rate would be
  // its count over whole seconds), so the run ends at the last response seen here
  let last_response = 0;
  const results = await Promise.all(
    job.targets.map((target, index) => {
      // without a callback autocannon answers its run's promise, which is also its event emitter
      const instance = autocannon({
        ...options(target, per_target, `${run}-${index}`),
        ...(amount ? { amount: Math.ceil(amount / job.targets.length) } : { duration: duration_s }),
      }) as Promise<autocannon.Result> & Pick<EventEmitter, 'on'>;
      instance.on('response', () => {
        last_response = Date.now();
      });
      return instance;
    }),
  );
  const seconds = (last_response - Math.min(...results.map((result) => new Date(result.start).getTime()))) / 1000;
  const total = results.reduce((sum, result) => sum + result.requests.total, 0);
  return {
    requests_per_s: total / seconds,
    p50_ms: Math.max(...results.map((result) => result.latency.p50)),
    p99_ms: Math.max(...results.map((result) => result.latency.p99)),
    total,
    non_2xx: results.reduce((sum, result) => sum + result.non2xx, 0),
    errors: results.reduce((sum, result) => sum + result.errors + result.timeouts, 0),
    warmup_total: 0,
  };
}

export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const run = randomBytes(4).toString('hex');
  const warmup = job.warmup_s > 0 && !job.amount ? await once(job, job.warmup_s, undefined, `${run}w`) : undefined;
  return { ...(await once(job, job.duration_s, job.amount, run)), warmup_total: warmup?.total ?? 0 };
}

if (process.send) {
  process.on('message', (job: LoadJob) => {
    runLoad(job).then(
      (result) => process.send!({ ok: true, result }),
      (error: Error) => process.send!({ ok: false, error: error.message }),
    );
  });
}
