import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { dispatchDueWebhooks } from '../../src/modules/webhooks/dispatcher.ts';
import { guardedLookup, refusalFor, TargetForbiddenError } from '../../src/modules/webhooks/targets.ts';
import { ADMIN_HEADERS, startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { startReceiver, type Receiver } from './receiver.ts';

/** Every spelling of a forbidden target the issue names, refused for live endpoints. */
const FORBIDDEN_FOR_LIVE = [
  'http://127.0.0.1:5432/',
  'http://localhost/hook',
  'http://api.localhost/hook',
  'http://0x7f000001/',
  'http://2130706433/',
  'http://127.1/',
  'http://017700000001/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://10.0.0.5/',
  'http://172.16.0.1/',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://169.254.169.254/latest/meta-data/',
  'http://[fd00:ec2::254]/',
  'http://[fe80::1]/',
  'http://[fc00::1]/',
  'http://0.0.0.0/',
  'http://[::]/',
  'http://224.0.0.1/',
  'http://255.255.255.255/',
  'http://[64:ff9b::7f00:1]/',
  'http://[2002:7f00:1::1]/',
  'https://user:secret@93.184.215.14/hook',
  'https://token@93.184.215.14/hook',
];

describe('SSRF guard for webhook targets (WEBHOOK_ALLOW_PRIVATE_TARGETS unset)', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let receiver: Receiver;

  before(async () => {
    t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' } });
    merchant = await t.createMerchant('SSRF');
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  it('refuses every internal spelling and credentials in the URL at registration for live endpoints: 400 WEBHOOK_URL_FORBIDDEN, no row', async () => {
    for (const url of FORBIDDEN_FOR_LIVE) {
      for (const [method, path] of [
        ['POST', '/v1/webhook-endpoints'],
        ['PUT', '/v1/webhook-endpoint'],
      ] as const) {
        const response = await t.call(method, path, merchant.live, { url });
        assert.equal(response.statusCode, 400, `${method} ${url}: ${response.body}`);
        assert.equal(response.json().error.code, 'WEBHOOK_URL_FORBIDDEN', url);
        assert.equal(response.json().error.details[0].field, 'body.url');
      }
    }
    assert.equal(
      (await t.db.selectFrom('webhook_endpoints').select('id').where('merchant_id', '=', merchant.id).execute()).length,
      0,
    );
    const admin = await t.request({
      method: 'POST',
      url: '/admin/merchants',
      headers: ADMIN_HEADERS,
      payload: { name: 'Internal', webhook_url: 'http://169.254.169.254/' },
    });
    assert.equal(admin.statusCode, 400);
    assert.equal(admin.json().error.code, 'WEBHOOK_URL_FORBIDDEN');
    // A PATCH to a forbidden URL is refused the same way and changes nothing.
    const ok = (
      await t.call('POST', '/v1/webhook-endpoints', merchant.live, { url: 'https://93.184.215.14/hook' })
    ).json().data;
    const patched = await t.call('PATCH', `/v1/webhook-endpoints/${ok.id}`, merchant.live, {
      url: 'http://[::ffff:10.0.0.1]/',
    });
    assert.equal(patched.json().error.code, 'WEBHOOK_URL_FORBIDDEN');
    assert.equal(
      (await t.call('GET', `/v1/webhook-endpoints/${ok.id}`, merchant.live)).json().data.url,
      'https://93.184.215.14/hook',
    );
    await t.call('DELETE', `/v1/webhook-endpoints/${ok.id}`, merchant.live);
  });

  it('sandbox endpoints are held to the same rule: no loopback (mpay listen reads the event stream), private, link-local or metadata', async () => {
    for (const url of [
      'http://127.0.0.1:4242/',
      'http://localhost:4242/',
      'http://[::1]:4242/',
      'http://10.0.0.5/',
      'http://169.254.169.254/',
      'http://[fd00:ec2::254]/',
      'http://100.64.0.1/',
      'http://user:pw@127.0.0.1/',
    ]) {
      const response = await t.call('POST', '/v1/webhook-endpoints', merchant.sandbox, { url });
      assert.equal(response.json().error?.code, 'WEBHOOK_URL_FORBIDDEN', url);
    }
  });

  it('refuses at connect time too (an endpoint whose address turned internal): a failed attempt with the reason, no request reaches it', async () => {
    // As if DNS now answered 127.0.0.1 for a live endpoint registered while public: the row is written directly.
    const id = randomUUID();
    const now = t.clock.now();
    await t.db
      .insertInto('webhook_endpoints')
      .values({
        id,
        merchant_id: merchant.id,
        is_sandbox: false,
        url: receiver.url,
        description: null,
        enabled_events: JSON.stringify(['*']),
        disabled: false,
        is_default: false,
        secret_sealed: t.application.webhooks.deps.box.seal('whsec_dGVzdA==', id),
        previous_secret_sealed: null,
        previous_secret_expires_at: null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      })
      .execute();
    await t.createSeller({
      currency: 'THB',
      payment_method: 'promptpay',
      display_name: 'S',
      liquidity_minor: 1_000_000,
      rate: '35.00',
      promptpay_id: '0812345678',
    });
    const trade = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: 'ssrf-1',
      amount: '10.00',
      currency: 'THB',
      return_url: 'https://shop.example/r',
    });
    assert.equal(trade.statusCode, 201, trade.body);
    assert.equal(await dispatchDueWebhooks({ ...t.application.webhooks.dispatch, timeout_ms: 2000 }), 1);
    assert.equal(receiver.received.length, 0, 'nothing was sent');
    const [delivery] = (await t.call('GET', `/v1/webhook-deliveries?endpoint_id=${id}`, merchant.live)).json().data;
    assert.equal(delivery.status, 'pending', 'a failed attempt, retried on the schedule');
    assert.equal(delivery.attempts[0].status_code, null);
    assert.match(delivery.attempts[0].error, /^WEBHOOK_URL_FORBIDDEN: 127\.0\.0\.1 is a loopback address/);
  });

  it('the connection-time lookup refuses a name that resolves to an internal address (DNS rebinding)', async () => {
    const lookup = guardedLookup({ is_sandbox: false, allow_private: false });
    const error = await new Promise<Error | null>((resolve) =>
      (lookup as any)('localhost', { all: true }, (failure: Error | null) => resolve(failure)),
    );
    assert.ok(error instanceof TargetForbiddenError, String(error));
    assert.match(error.message, /localhost resolves to .* loopback/);
    const open = guardedLookup({ is_sandbox: true, allow_private: true });
    const addresses = await new Promise<unknown>((resolve, reject) =>
      (open as any)('localhost', { all: true }, (failure: Error | null, found: unknown) =>
        failure ? reject(failure) : resolve(found),
      ),
    );
    assert.ok(Array.isArray(addresses) && addresses.length > 0);
  });

  it('classifies addresses with ipaddr.js: public allowed, the operator switch opens private and loopback, never metadata', () => {
    const live = { is_sandbox: false, allow_private: false };
    const open = { is_sandbox: false, allow_private: true };
    assert.equal(refusalFor('93.184.215.14', live), null);
    assert.equal(refusalFor('2606:2800:21f:cb07:6820:80da:af6b:8b2c', live), null);
    assert.match(refusalFor('::ffff:192.168.0.1', live)!, /private/);
    assert.equal(refusalFor('192.168.0.1', open), null);
    assert.equal(refusalFor('127.0.0.1', open), null);
    assert.equal(refusalFor('100.64.1.1', open), null);
    assert.match(refusalFor('169.254.169.254', open)!, /metadata/);
    assert.match(refusalFor('fd00:ec2::254', open)!, /metadata/);
    assert.match(refusalFor('224.0.0.1', open)!, /multicast/);
  });
});

describe('WEBHOOK_ALLOW_PRIVATE_TARGETS=true (closed deployments)', () => {
  it('accepts private and loopback targets for live endpoints, still refuses metadata', async () => {
    const t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    try {
      const merchant = await t.createMerchant('Closed');
      for (const url of ['http://10.1.2.3/hook', 'http://127.0.0.1:9/hook']) {
        assert.equal((await t.call('POST', '/v1/webhook-endpoints', merchant.live, { url })).statusCode, 201, url);
      }
      assert.equal(
        (await t.call('POST', '/v1/webhook-endpoints', merchant.live, { url: 'http://169.254.169.254/' })).json().error
          .code,
        'WEBHOOK_URL_FORBIDDEN',
      );
    } finally {
      await t.close();
    }
  });

  it('never the gateway itself: its listening port on loopback, any local address or localhost, nor PUBLIC_BASE_URL', async () => {
    const t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    try {
      await t.application.app.listen({ port: 0, host: '127.0.0.1' });
      const port = (t.application.app.server.address() as { port: number }).port;
      const merchant = await t.createMerchant('Self');
      for (const url of [
        `http://127.0.0.1:${port}/healthz`,
        `http://localhost:${port}/`,
        `http://[::1]:${port}/`,
        `http://0.0.0.0:${port}/`,
        'http://gateway.test/hook',
      ]) {
        for (const key of [merchant.live, merchant.sandbox]) {
          const response = await t.call('POST', '/v1/webhook-endpoints', key, { url });
          assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
          assert.equal(response.json().error.code, 'WEBHOOK_URL_FORBIDDEN');
          assert.match(response.json().error.message, /gateway/, url);
        }
      }
      // another port on the same machine is a private target like any other
      assert.equal(
        (
          await t.call('POST', '/v1/webhook-endpoints', merchant.live, {
            url: `http://127.0.0.1:${port === 9 ? 10 : 9}/hook`,
          })
        ).statusCode,
        201,
      );
    } finally {
      await t.close();
    }
  });

  it('keeps no response excerpt from a private target (the attempt keeps its status)', async () => {
    const t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    const receiver = await startReceiver();
    try {
      receiver.answer = () => 500;
      const merchant = await t.createMerchant('Excerpt');
      assert.equal(
        (await t.call('PUT', '/v1/webhook-endpoint', merchant.sandbox, { url: receiver.url })).statusCode,
        200,
      );
      assert.equal(
        (await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, { scenario: 'expired' })).statusCode,
        201,
      );
      assert.ok((await dispatchDueWebhooks(t.application.webhooks.dispatch)) >= 1);
      await receiver.waitFor(1);
      const [delivery] = (await t.call('GET', '/v1/webhook-deliveries?limit=1', merchant.sandbox)).json().data;
      assert.equal(delivery.attempts[0].status_code, 500);
      assert.equal(delivery.attempts[0].response_excerpt, null);
    } finally {
      await receiver.close();
      await t.close();
    }
  });
});
