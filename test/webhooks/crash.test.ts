import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/lib/clock.ts';
import { ADMIN_TOKEN, INTERNAL_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { startReceiver, type Receiver } from './receiver.ts';

const ON_POSTGRES = Boolean(process.env['DATABASE_URL']);
const MAIN = new URL('../../src/main.ts', import.meta.url).pathname;

/** A real worker process (`ROLES=worker`) on the test's PostgreSQL database. */
function startWorker(database_url: string): ChildProcess {
  return spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      DATABASE_URL: database_url,
      ROLES: 'worker',
      LOG_LEVEL: 'silent',
      ADMIN_SERVICE_TOKEN: ADMIN_TOKEN,
      INTERNAL_SERVICE_TOKEN: INTERNAL_TOKEN,
      WEBHOOK_TIMEOUT_MS: '1000',
      WORKER_POLL_INTERVAL_MS: '100',
      // The receiver listens on loopback, a private target the operator must allow.
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

const SKIP = ON_POSTGRES
  ? false
  : 'needs PostgreSQL (DATABASE_URL): a second process cannot open the in-process PGlite database';

describe('crash safety of the dispatcher', () => {
  let t: TestApp;
  let receiver: Receiver;
  const workers: ChildProcess[] = [];
  before(async () => {
    if (!ON_POSTGRES) return;
    // The worker processes use the real clock, so the test's clock starts at real time.
    t = await startTestApp({ clock: new ManualClock(new Date()) });
    receiver = await startReceiver();
  });
  after(async () => {
    if (!ON_POSTGRES) return;
    for (const worker of workers) if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
    await receiver.close();
    await t.close();
  });

  it('a worker killed between sending and recording: the event is sent again after restart, same event id', {
    skip: SKIP,
  }, async () => {
    const merchant = await t.createMerchant('Crash');
    await t.call('PUT', '/v1/webhook-endpoint', merchant.sandbox, { url: receiver.url });
    // The first request is held open: the worker has sent but not recorded when it dies.
    receiver.answer = () => (receiver.received.length === 1 ? 'hang' : 200);
    const simulated = await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, { scenario: 'expired' });
    assert.equal(simulated.statusCode, 201);

    const first = startWorker(t.application.config.database_url!);
    workers.push(first);
    const [sent] = await receiver.waitFor(1, 20_000);
    first.kill('SIGKILL');
    await once(first, 'exit');
    const unrecorded = await t.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
    assert.equal(unrecorded.status, 'pending');
    assert.equal(unrecorded.attempt_count, 0, 'the dead worker recorded nothing');

    const second = startWorker(t.application.config.database_url!);
    workers.push(second);
    const [, resent] = await receiver.waitFor(2, 20_000);
    assert.equal(resent!.headers['webhook-id'], sent!.headers['webhook-id']);
    assert.equal(resent!.body['id'], sent!.body['id']);
    assert.deepEqual(resent!.raw, sent!.raw, 'the same bytes');
    let delivery = unrecorded;
    for (let tries = 0; tries < 100 && delivery.status !== 'succeeded'; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      delivery = await t.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
    }
    assert.equal(delivery.status, 'succeeded');
    assert.equal(delivery.attempt_count, 1);
    second.kill('SIGTERM');
    await once(second, 'exit');
    assert.equal(receiver.received.length, 2, 'sent twice in all: at least once, not more');
  });
});
