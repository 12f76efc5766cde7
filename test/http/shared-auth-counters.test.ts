import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { openDatabase } from '../../src/db/database.ts';
import { PAIR_MAX_FAILURES, SignInThrottle } from '../../src/http/sign-in-throttle.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { openTestDatabase } from '../helpers/database.ts';

const BAD_KEY = 'svc_live_0000000000000000000000000000000000000000';

/**
 * A burst of failed authentications alternating over two instances: one budget of `per_second` for both (a slow
 * machine may see the bucket refill during the burst), never one each.
 */
async function oneFailedAuthBudget(a: TestApp, b: TestApp, per_second: number): Promise<void> {
  const started = performance.now();
  const responses = [];
  for (let i = 0; i < 8; i++) responses.push(await (i % 2 ? a : b).call('GET', '/v1/payments', BAD_KEY));
  const refilled = Math.floor(((performance.now() - started) / 1000) * per_second);
  const unauthorized = responses.filter((r) => r.statusCode === 401).length;
  assert.ok(
    unauthorized >= per_second && unauthorized <= Math.min(per_second + refilled, 2 * per_second - 1),
    `${unauthorized} of 8 failures answered 401 (the rest 429) with ${refilled} tokens refilled during the burst`,
  );
  assert.equal(responses.filter((r) => r.statusCode === 429).length, 8 - unauthorized);
}

/** Sign-in failures of one (email, address) over two instances' stores: refused after PAIR_MAX_FAILURES in all. */
async function oneSignInBudget(a: TestApp, b: TestApp): Promise<void> {
  const throttle = (t: TestApp) =>
    new SignInThrottle({ counters: t.application.auth_counters, now_ms: () => Date.now(), max_delay_ms: 0 });
  const [on_a, on_b] = [throttle(a), throttle(b)];
  const email = `owner-${Date.now()}@shop.test`;
  for (let i = 0; i < PAIR_MAX_FAILURES; i++) {
    const attempt = await (i % 2 ? on_a : on_b).attempt('198.51.100.7', email);
    assert.equal(attempt.refused, false, `attempt ${i + 1}`);
    if (!attempt.refused) await attempt.settle(false);
  }
  assert.equal((await on_a.attempt('198.51.100.7', email)).refused, true, 'refused in one instance');
  assert.equal((await on_b.attempt('198.51.100.7', email)).refused, true, 'and in the other');
}

describe('failed authentication and sign-in: two instances on one PostgreSQL database share one budget', {
  skip: !process.env['DATABASE_URL'] && 'needs PostgreSQL (DATABASE_URL)',
}, () => {
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    const env = { RATE_LIMIT_FAILED_AUTH_PER_SECOND: '3' };
    const database = await openTestDatabase();
    a = await startTestApp({ database, env });
    const second = await openDatabase({ database_url: database.url, data_dir: 'memory://' });
    b = await startTestApp({ database: { ...second, url: database.url }, env });
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  it('failed authentications from one address: one budget for both instances', () => oneFailedAuthBudget(a, b, 3));
  it('failed sign-ins of one email from one address: one budget for both instances', () => oneSignInBudget(a, b));
});

describe('failed authentication and sign-in: two instances with Redis share one budget', {
  skip: !(await redisUp()) && 'Redis is not reachable on 127.0.0.1:6379',
}, () => {
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    const env = {
      RATE_LIMIT_FAILED_AUTH_PER_SECOND: '3',
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_TIMEOUT_MS: '2000',
    };
    a = await startTestApp({ env });
    b = await startTestApp({ env });
    // another run's failures from the same address must not count here
    const redis = new Redis('redis://127.0.0.1:6379');
    await redis.del('mpay:rl:failed-auth:127.0.0.1');
    redis.disconnect();
  });
  after(async () => {
    await a.close();
    await b.close();
  });

  it('failed authentications from one address: one budget for both instances', () => oneFailedAuthBudget(a, b, 3));
  it('failed sign-ins of one email from one address: one budget for both instances', () => oneSignInBudget(a, b));
});

async function redisUp(): Promise<boolean> {
  const redis = new Redis('redis://127.0.0.1:6379', {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}
