import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';

const PROXY = '10.0.0.2';
const BAD_KEY = `svc_live_${'x'.repeat(40)}`;

describe('behind a trusted proxy (TRUST_PROXY): limits count per client, so one noisy client blocks nobody else', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  before(async () => {
    t = await startTestApp({
      env: { TRUST_PROXY: '10.0.0.0/8', RATE_LIMIT_FAILED_AUTH_PER_SECOND: '3', RATE_LIMIT_LIVE_PER_SECOND: '20' },
    });
    merchant = await t.createMerchant('Behind LB');
  });
  after(() => t.close());

  const via = (client: string, url: string, headers: Record<string, string> = {}) =>
    t.request({
      method: 'GET',
      url,
      remoteAddress: PROXY,
      headers: { 'x-forwarded-for': `${client}, ${PROXY}`.replace(`, ${PROXY}`, ''), ...headers },
    });

  it('a flood of bad credentials and public calls from one client: that client gets 429, another client stays at 2xx', async () => {
    const flood = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        via(
          '203.0.113.66',
          index % 2 ? '/v1/payments' : '/v1/reference/thai-banks',
          index % 2 ? { 'x-api-key': BAD_KEY } : {},
        ),
      ),
    );
    const flood_statuses = new Set(flood.map((response) => response.statusCode));
    assert.ok(flood_statuses.has(429), `the noisy client is limited: ${[...flood_statuses]}`);
    assert.ok(!flood_statuses.has(500));

    const others = await Promise.all([
      ...Array.from({ length: 10 }, () => via('198.51.100.7', '/v1/payments', { 'x-api-key': merchant.live })),
      ...Array.from({ length: 5 }, () => via('198.51.100.8', '/v1/reference/thai-banks')),
      via('198.51.100.9', '/v1/merchants/me', { authorization: `Bearer ${merchant.jwt}` }),
    ]);
    assert.deepEqual([...new Set(others.map((response) => response.statusCode))], [200]);
    // a wrong key from another client is that client's own 401, not the noisy client's 429
    assert.equal((await via('198.51.100.10', '/v1/payments', { 'x-api-key': BAD_KEY })).statusCode, 401);
  });

  it('an authenticated merchant behind the same client address as a flood keeps its own per-key budget', async () => {
    const flood = await Promise.all(Array.from({ length: 100 }, () => via('203.0.113.77', '/v1/reference/thai-banks')));
    assert.ok(flood.some((response) => response.statusCode === 429));
    const keyed = await Promise.all(
      Array.from({ length: 10 }, () => via('203.0.113.78', '/v1/payments', { 'x-api-key': merchant.test })),
    );
    assert.deepEqual([...new Set(keyed.map((response) => response.statusCode))], [200]);
  });

  it('X-Forwarded-For from a peer that is not a trusted proxy is ignored (no spoofing a fresh address)', async () => {
    const statuses: number[] = [];
    for (let index = 0; index < 5; index += 1) {
      const response = await t.request({
        method: 'GET',
        url: '/v1/payments',
        remoteAddress: '192.0.2.99',
        headers: { 'x-api-key': BAD_KEY, 'x-forwarded-for': `203.0.113.${index}` },
      });
      statuses.push(response.statusCode);
    }
    assert.deepEqual(statuses, [401, 401, 401, 429, 429]);
  });
});

describe('TRUST_PROXY is validated at start-up', () => {
  it('accepts false, addresses, CIDR ranges and loopback; refuses anything else naming the variable', () => {
    assert.equal(loadConfig({}).trust_proxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trust_proxy, false);
    assert.deepEqual(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,2001:db8::/32,192.0.2.1' }).trust_proxy, [
      'loopback',
      '10.0.0.0/8',
      '2001:db8::/32',
      '192.0.2.1',
    ]);
    for (const bad of ['true', '10.0.0.0/33', 'proxy.example', '10.0.0.1/8/2']) {
      assert.throws(() => loadConfig({ TRUST_PROXY: bad }), /TRUST_PROXY/, bad);
    }
  });
});

describe('GET /metrics with METRICS_TOKEN', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  const token = 'metrics-token-0123456789abcdef';
  before(async () => {
    t = await startTestApp({ env: { METRICS_TOKEN: token } });
    merchant = await t.createMerchant('Metrics');
  });
  after(() => t.close());

  it('needs the bearer token, and no label carries a merchant or resource id', async () => {
    const payment = await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, {
      scenario: 'matched_then_completed',
    });
    assert.equal(payment.statusCode, 201);
    const payment_id = payment.json().data.payment.id as string;
    await t.call('GET', `/v1/payments/${payment_id}`, merchant.sandbox);
    await t.call('GET', `/v1/payments/${payment_id}-unknown`, merchant.sandbox);
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789abcdef', token]) {
      const response = await t.request({
        method: 'GET',
        url: '/metrics',
        headers: authorization ? { authorization } : {},
      });
      assert.equal(response.statusCode, 401);
      assert.equal(response.json().error.code, 'UNAUTHORIZED');
    }
    const metrics = await t.request({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
    assert.equal(metrics.statusCode, 200);
    assert.match(metrics.body, /http_requests_total\{method="GET",route="\/v1\/payments\/:id",status_code="200"\}/);
    for (const id of [merchant.id, payment_id, payment_id.replace(/^sbx_/, '')])
      assert.ok(!metrics.body.includes(id), `${id} in /metrics`);
  });
});
