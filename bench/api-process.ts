/**
 * One api process for the bench's scale scenario and the profile (bench/profile.ts): the application from the
 * environment (ROLES=api, DATABASE_URL), with the bench baselines, on a free port; it tells its parent the address over
 * IPC, and answers 'stats' with its batching allocator's counters. With BENCH_STATEMENTS=1 it counts every statement
 * it sends (calls, time to answer, rows, by statement text) and answers 'statements' with them (and resets them).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import pg from 'pg';
import pino from 'pino';
import { createApplication } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { PaymentCreateBatcher } from '../src/modules/payments/create-batch.ts';
import { registerBaselines } from './context.ts';

interface StatementStats {
  calls: number;
  ms: number;
  rows: number;
}
const statements = new Map<string, StatementStats>();
if (process.env['BENCH_STATEMENTS'] === '1') {
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string; name?: string } | undefined;
    const text = (typeof first === 'string' ? first : (first?.text ?? first?.name ?? '?')).replace(/\s+/g, ' ');
    const started = performance.now();
    const result = query.apply(this, args);
    if (result instanceof Promise)
      result.then(
        (answer: { rowCount?: number | null } | undefined) => {
          const stats = statements.get(text) ?? { calls: 0, ms: 0, rows: 0 };
          stats.calls++;
          stats.ms += performance.now() - started;
          stats.rows += answer?.rowCount ?? 0;
          statements.set(text, stats);
        },
        () => {},
      );
    return result;
  } as never;
}

const config = loadConfig(process.env as Record<string, string>);
const database = await openDatabase({ database_url: config.database_url, data_dir: 'memory://' });
const application = await createApplication({ config, database, logger: pino({ level: 'silent' }) });
registerBaselines(application);
const url = await application.app.listen({ port: 0, host: '127.0.0.1' });
process.send?.({ url });
// bench/profile.ts: 'profile-start', then { profile_stop: path } writes the CPU profile of the time between
let profiler: Session | undefined;
process.on('message', (message: unknown) => {
  if (message === 'profile-start') {
    profiler = new Session();
    profiler.connect();
    void (async () => {
      await profiler!.post('Profiler.enable');
      await profiler!.post('Profiler.setSamplingInterval', { interval: 250 });
      await profiler!.post('Profiler.start');
      process.send?.({ profiling: true });
    })();
  }
  if (typeof message === 'object' && message !== null && 'profile_stop' in message) {
    void (async () => {
      const { profile } = await profiler!.post('Profiler.stop');
      writeFileSync(String(message.profile_stop), JSON.stringify(profile));
      profiler!.disconnect();
      process.send?.({ profiled: true });
    })();
  }
});
process.on('message', (message) => {
  const batcher = application.payments.create_batcher;
  if (message === 'stats')
    process.send?.({ stats: batcher instanceof PaymentCreateBatcher ? batcher.stats : undefined });
  if (message === 'statements') {
    process.send?.({ statements: [...statements].map(([text, stats]) => ({ text, ...stats })) });
    statements.clear();
  }
});
process.on('SIGTERM', () => {
  void application.close().finally(() => database.close().finally(() => process.exit(0)));
});
