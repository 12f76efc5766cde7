import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';

describe('rate limits (in-memory store)', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  before(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_LIVE_PER_SECOND: '5', RATE_LIMIT_SANDBOX_PER_SECOND: '3' } });
    merchant = await t.createMerchant();
  });
  after(() => t.close());

  it('gives each sandbox key 3 requests a second, then 429 RATE_LIMITED with Retry-After and RateLimit headers', async () => {
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => t.call('GET', '/v1/payments', merchant.sandbox)),
    );
    const statuses = responses.map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [200, 200, 200, 429, 429, 429]);
    const limited = responses.find((r) => r.statusCode === 429)!;
    assert.equal(limited.json().error.code, 'RATE_LIMITED');
    assert.equal(limited.headers['retry-after'], '1');
    assert.equal(limited.headers['ratelimit-policy'], '"sandbox";q=3;w=1');
    assert.match(String(limited.headers['ratelimit']), /^"sandbox";r=0;t=\d+$/);
    const ok = responses.find((r) => r.statusCode === 200)!;
    assert.match(String(ok.headers['ratelimit']), /^"sandbox";r=[0-2];t=\d+$/);
  });

  it('keeps each key in its own bucket: the live key still has its 5', async () => {
    const responses = await Promise.all(Array.from({ length: 7 }, () => t.call('GET', '/v1/payments', merchant.live)));
    assert.equal(responses.filter((r) => r.statusCode === 200).length, 5);
    assert.equal(responses.filter((r) => r.statusCode === 429).length, 2);
    assert.equal(responses[0]!.headers['ratelimit-policy'], '"live";q=5;w=1');
  });

  it('does not count health checks', async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => t.request({ method: 'GET', url: '/healthz' })),
    );
    assert.ok(responses.every((r) => r.statusCode === 200));
  });
});

describe('rate limits shared through Redis', {
  skip: !(await redisUp()) && 'Redis is not reachable on 127.0.0.1:6379',
}, () => {
  let first: TestApp;
  let second: TestApp;
  before(async () => {
    // A generous Redis timeout: on a loaded machine the default 50 ms lets the in-process fallback take over, and
    // this test is about the shared budget, not the fallback (tested below)
    const env = { RATE_LIMIT_LIVE_PER_SECOND: '4', REDIS_URL: 'redis://127.0.0.1:6379', REDIS_TIMEOUT_MS: '2000' };
    first = await startTestApp({ env });
    second = await startTestApp({ env });
  });
  after(async () => {
    await first.close();
    await second.close();
  });

  it('two api processes share one budget per key', async () => {
    // The same key must exist in both apps' databases: copy the key row from the first into the second.
    const merchant = await first.createMerchant();
    const merchant_row = await first.db
      .selectFrom('merchants')
      .selectAll()
      .where('id', '=', merchant.id)
      .executeTakeFirstOrThrow();
    const key_rows = await first.db.selectFrom('api_keys').selectAll().where('merchant_id', '=', merchant.id).execute();
    await second.db.insertInto('merchants').values(merchant_row).execute();
    await second.db.insertInto('api_keys').values(key_rows).execute();

    const started = performance.now();
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? first : second).call('GET', '/v1/payments', merchant.live)),
    );
    // One shared bucket of 4 that refills 4 tokens a second: a slow machine may see a refill during the burst (on a
    // quiet one the burst takes well under 250 ms, so exactly 4 pass), never two buckets' worth (8).
    const refilled = Math.floor(((performance.now() - started) / 1000) * 4);
    const allowed = responses.filter((r) => r.statusCode === 200).length;
    assert.ok(
      allowed >= 4 && allowed <= Math.min(4 + refilled, 7),
      `${allowed} of 8 allowed with ${refilled} tokens refilled during the burst`,
    );
    assert.equal(responses.filter((r) => r.statusCode === 429).length, 8 - allowed);
  });
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

describe('rate limits when Redis is down', () => {
  let t: TestApp;
  before(async () => {
    // nothing listens on port 1: every Redis call fails at once
    t = await startTestApp({ env: { RATE_LIMIT_LIVE_PER_SECOND: '2', REDIS_URL: 'redis://127.0.0.1:1' } });
  });
  after(() => t.close());

  it('fails fast to the in-process limiter: requests take milliseconds, the limit still holds, /readyz says degraded', async () => {
    // With Redis down the in-process buckets take over at once, not after a command timeout per request.
    const merchant = await t.createMerchant();
    const started_ms = performance.now();
    const responses = await Promise.all(Array.from({ length: 4 }, () => t.call('GET', '/v1/payments', merchant.live)));
    const elapsed_ms = performance.now() - started_ms;
    assert.deepEqual(responses.map((r) => r.statusCode).sort(), [200, 200, 429, 429]);
    // Waiting out a 2 s command timeout per request would exceed this; the bound leaves room for a loaded CI machine.
    assert.ok(elapsed_ms < 1000, `4 requests took ${elapsed_ms.toFixed(0)} ms with Redis down`);
    const single_started_ms = performance.now();
    await t.call('GET', '/v1/payments', merchant.test);
    assert.ok(
      performance.now() - single_started_ms < 1000,
      'one request with Redis down answers well within the old 2 s',
    );

    const ready = await t.request({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200, 'degraded but ready: requests are still limited and served');
    assert.equal(ready.json().checks.rate_limit.ok, true);
    assert.match(ready.json().checks.rate_limit.detail, /^degraded: Redis unreachable/);
  });
});

describe('failed authentication is rate-limited per client address', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_FAILED_AUTH_PER_SECOND: '3' } });
  });
  after(() => t.close());

  it('allows a burst of 3 failures, then answers 429 with Retry-After even for a valid key', async () => {
    const merchant = await t.createMerchant();
    const statuses = [];
    for (let i = 0; i < 5; i += 1)
      statuses.push((await t.call('GET', '/v1/payments', `svc_live_${'x'.repeat(40)}${i}`)).statusCode);
    assert.deepEqual(statuses, [401, 401, 401, 429, 429]);
    // While blocked, a right guess is not revealed: still 429 before the key is checked.
    const blocked = await t.call('GET', '/v1/payments', merchant.live);
    assert.equal(blocked.statusCode, 429);
    assert.equal(blocked.json().error.code, 'RATE_LIMITED');
    assert.ok(Number(blocked.headers['retry-after']) >= 1);
    // Public routes are not blocked, and another address is not affected.
    assert.equal((await t.request({ method: 'GET', url: '/v1/reference/thai-banks' })).statusCode, 200);
    assert.equal(
      (
        await t.request({
          method: 'GET',
          url: '/v1/payments',
          headers: { 'x-api-key': merchant.live },
          remoteAddress: '10.9.9.9',
        })
      ).statusCode,
      200,
    );
  });
});
