import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dispatchDueWebhooks } from '../../src/modules/webhooks/dispatcher.ts';
import {
  computeServiceSignature,
  verifyWebhook,
  WebhookVerificationError,
} from '../../clients/typescript/src/webhooks.js';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { startReceiver, type Receiver } from './receiver.ts';

describe('webhook endpoint, events and the verification helper', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let receiver: Receiver;
  const drain = async () => {
    for (let handled = -1; handled !== 0; )
      handled = await dispatchDueWebhooks({ ...t.application.webhooks.dispatch, timeout_ms: 2000 });
  };

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Endpoint');
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  it('sets the URL per mode (secret shown), reads it back without the secret, rotates, and signs with the new secret', async () => {
    assert.equal((await t.call('PUT', '/v1/webhook-endpoint', undefined, { url: receiver.url })).statusCode, 401);
    for (const url of ['not a url', 'ftp://x.example/hook', '']) {
      const bad = await t.call('PUT', '/v1/webhook-endpoint', merchant.live, { url });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().error.code, 'VALIDATION_ERROR');
    }
    const set = await t.call('PUT', '/v1/webhook-endpoint', merchant.live, { url: receiver.url });
    assert.equal(set.statusCode, 200);
    assert.equal(set.json().data.url, receiver.url);
    assert.equal(
      set.json().data.secret,
      merchant.webhook_secret,
      "the secret issued with the merchant is the live default endpoint's",
    );
    assert.deepEqual((await t.call('GET', '/v1/webhook-endpoint', merchant.live)).json().data, {
      url: receiver.url,
      secret_set: true,
    });
    // Per mode: a sandbox key sees the sandbox default endpoint only, and there is none yet.
    const read = await t.call('GET', '/v1/webhook-endpoint', merchant.sandbox);
    assert.deepEqual(read.json().data, { url: null, secret_set: false });
    assert.ok(!read.body.includes('whsec_'));
    const sandbox_set = await t.call('PUT', '/v1/webhook-endpoint', merchant.sandbox, { url: receiver.url });
    assert.equal(sandbox_set.statusCode, 200);
    const sandbox_secret = sandbox_set.json().data.secret;
    assert.notEqual(sandbox_secret, merchant.webhook_secret, "each mode's endpoint has its own secret");

    const rotated = await t.call('POST', '/v1/webhook-endpoint/rotate-secret', merchant.sandbox, {
      grace_period_seconds: 0,
    });
    assert.equal(rotated.statusCode, 200);
    const secret = rotated.json().data.secret;
    assert.match(secret, /^whsec_[A-Za-z0-9+/=]+$/);
    assert.notEqual(secret, sandbox_secret);
    await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, { scenario: 'expired' });
    await drain();
    assert.equal(receiver.received.length, 1, 'the sandbox event went to the sandbox endpoint only, not the live one');
    const [hook] = receiver.received;
    assert.equal(hook!.headers['x-service-signature'], computeServiceSignature(hook!.raw, secret));
    assert.throws(
      () => verifyWebhook(hook!.raw, hook!.headers, sandbox_secret, { now: t.clock.now() }),
      (error: WebhookVerificationError) => error.reason === 'signature_mismatch',
    );
    const event = verifyWebhook(hook!.raw, hook!.headers, secret, { now: t.clock.now() });
    assert.equal(event.type, 'payment.expired');
  });

  it('verification helper: raw body in, constant-time compare, clear failures; importable as mpay/webhooks', async () => {
    const secret = (
      await t.call('POST', '/v1/webhook-endpoint/rotate-secret', merchant.sandbox, { grace_period_seconds: 0 })
    ).json().data.secret;
    receiver.received.length = 0;
    await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, { scenario: 'matched_then_completed' });
    await drain();
    const { raw, headers } = receiver.received[0]!;
    const now = t.clock.now();
    const fails = (reason: string, run: () => unknown) =>
      assert.throws(
        run,
        (error: WebhookVerificationError) => error instanceof WebhookVerificationError && error.reason === reason,
      );
    assert.equal(verifyWebhook(raw, headers, secret, { now }).event, 'payment.matched');
    assert.equal(
      verifyWebhook(raw.toString('utf8'), headers, secret, { now, scheme: 'service' }).event,
      'payment.matched',
    );
    assert.equal(
      verifyWebhook(new Uint8Array(raw), new Headers(headers as Record<string, string>), secret, {
        now,
        scheme: 'standard',
      }).event,
      'payment.matched',
    );
    fails('raw_body_required', () => verifyWebhook(JSON.parse(raw.toString()) as never, headers, secret, { now }));
    fails('signature_mismatch', () =>
      verifyWebhook(Buffer.concat([raw, Buffer.from(' ')]), headers, secret, { now, scheme: 'service' }),
    );
    fails('signature_mismatch', () =>
      verifyWebhook(raw, { ...headers, 'x-service-signature': 'ab' }, secret, { now, scheme: 'service' }),
    );
    fails('signature_missing', () =>
      verifyWebhook(raw, { ...headers, 'x-service-signature': undefined }, secret, { now }),
    );
    fails('secret_missing', () => verifyWebhook(raw, headers, '', { now }));
    fails('timestamp_out_of_tolerance', () =>
      verifyWebhook(raw, headers, secret, { now: new Date(now.getTime() + 301_000), scheme: 'standard' }),
    );
    fails('signature_mismatch', () =>
      verifyWebhook(raw, { ...headers, 'webhook-id': 'evt_other' }, secret, { now, scheme: 'standard' }),
    );
    const packaged = await import('mpay/webhooks');
    assert.equal(packaged.verifyWebhook(raw, headers, secret, { now }).id, headers['webhook-id']);
  });

  it("lists events of the last 30 days for the key's mode with filters and pagination", async () => {
    const created = await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, {
      scenario: 'settlement_cycle',
    });
    const payment_id = created.json().data.payment.id;
    const mine = await t.call('GET', `/v1/events?resource_id=${payment_id}`, merchant.sandbox);
    assert.equal(mine.statusCode, 200);
    assert.deepEqual(
      mine.json().data.map((event: any) => event.type),
      ['payment.completed', 'payment.matched'],
      'newest first',
    );
    assert.equal(mine.json().data[0].delivery_status, 'pending');
    assert.equal(mine.json().data[0].payload.payment_id, payment_id);
    const settled = await t.call('GET', '/v1/events?type=settlement.completed', merchant.sandbox);
    assert.equal(settled.json().data.length, 1);
    assert.equal((await t.call('GET', '/v1/events?delivered=false&limit=100', merchant.sandbox)).json().data.length, 3);
    await drain();
    assert.equal((await t.call('GET', '/v1/events?delivered=false&limit=100', merchant.sandbox)).json().data.length, 0);
    // Pagination walks every event once, in (created_at, seq) order.
    const all = (await t.call('GET', '/v1/events?limit=100', merchant.sandbox))
      .json()
      .data.map((event: any) => event.id);
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = (
        await t.call('GET', `/v1/events?limit=2${cursor ? `&cursor=${cursor}` : ''}`, merchant.sandbox)
      ).json();
      walked.push(...page.data.map((event: any) => event.id));
      cursor = page.next_cursor;
    } while (cursor);
    assert.deepEqual(walked, all);
    assert.equal((await t.call('GET', '/v1/events?cursor=garbage', merchant.sandbox)).statusCode, 400);
    assert.equal((await t.call('GET', '/v1/events?limit=0', merchant.sandbox)).statusCode, 400);
    assert.equal((await t.call('GET', '/v1/events', undefined)).statusCode, 401);
    assert.equal(
      (await t.call('GET', '/v1/events', merchant.live)).json().data.length,
      0,
      'live sees no sandbox events',
    );
    t.clock.advance(31 * 24 * 3600_000);
    assert.equal((await t.call('GET', '/v1/events', merchant.sandbox)).json().data.length, 0, 'older than 30 days');
  });
});
