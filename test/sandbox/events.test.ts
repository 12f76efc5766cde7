import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SYNTHETIC_EVENT_TYPES } from '../../src/modules/sandbox/event-types.ts';
import { dispatchDueWebhooks } from '../../src/modules/webhooks/dispatcher.ts';
import { verifyWebhook } from '../../clients/typescript/src/webhooks.js';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

describe('POST /v1/sandbox/events: sandbox events of every non-payment type', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let receiver: Receiver;
  let secret: string;

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Sandbox events');
    receiver = await startReceiver();
    secret = (
      await t.call('PUT', '/v1/webhook-endpoint', merchant.sandbox, { url: receiver.url.replace(/hooks$/, 'sandbox') })
    ).json().data.secret;
    await t.call('PUT', '/v1/webhook-endpoint', merchant.live, { url: receiver.url.replace(/hooks$/, 'live') });
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  it('writes each type to the outbox as a real event; it reaches the sandbox endpoint only, signed', async () => {
    for (const type of SYNTHETIC_EVENT_TYPES) {
      const response = await t.call('POST', '/v1/sandbox/events', merchant.sandbox, { type });
      assert.equal(response.statusCode, 201, `${type}: ${response.body}`);
      const { id, event } = response.json().data;
      assert.match(id, /^evt_/);
      assert.equal(event.type, type);
      assert.equal(event.event, type);
      assert.equal(event.idempotency_key, id);
      assert.equal(event.sandbox, true);
      assert.match(event.data.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    }
    const listed = (await t.call('GET', '/v1/events?limit=100', merchant.sandbox)).json().data;
    assert.deepEqual(listed.map((row: any) => row.type).sort(), [...SYNTHETIC_EVENT_TYPES].sort());
    for (let handled = -1; handled !== 0; )
      handled = await dispatchDueWebhooks({ ...t.application.webhooks.dispatch, timeout_ms: 2000 });
    assert.equal(receiver.received.length, SYNTHETIC_EVENT_TYPES.length);
    for (const hook of receiver.received) {
      assert.equal(hook.path, '/sandbox', 'never the live endpoint');
      verifyWebhook(hook.raw, hook.headers, secret, { now: t.clock.now() });
    }
    const settlement = receiver.received.find((hook) => hook.body['type'] === 'settlement.completed')!.body;
    assert.equal(settlement['settlement_id'], settlement['data'].id, 'the settlement envelope carries the flat fields');
    // Payouts the right way round: the buyer is told whom to pay, the seller what to expect.
    const matched = receiver.received.find((hook) => hook.body['type'] === 'buy_order.matched')!.body;
    assert.deepEqual(matched['data'].fills[0].pay_to, {
      display_name: 'Sandbox Seller',
      destination: { rail: 'promptpay', promptpay_id: '0812345678' },
    });
    assert.equal(matched['data'].fills[0].fiat_amount, matched['data'].filled_fiat_amount);
    const requested = receiver.received.find((hook) => hook.body['type'] === 'sell_order.cash_leg_requested')!.body;
    assert.deepEqual(
      [requested['data'].cash_leg.direction, requested['data'].cash_leg.to],
      ['buyers_pay_you', { rail: 'promptpay', promptpay_id: '0812345678' }],
    );
    assert.deepEqual(
      (await t.call('GET', '/v1/events', merchant.live)).json().data,
      [],
      'a live key sees none of them',
    );
  });

  it('refuses a live key (403 SANDBOX_ONLY), no key (401), an unknown type (400), and writes no event', async () => {
    const before_count = (await t.db.selectFrom('events').select('id').execute()).length;
    const live = await t.call('POST', '/v1/sandbox/events', merchant.live, { type: 'sell_order.completed' });
    assert.equal(live.statusCode, 403);
    assert.equal(live.json().error.code, 'SANDBOX_ONLY');
    assert.equal(
      (await t.call('POST', '/v1/sandbox/events', undefined, { type: 'sell_order.completed' })).statusCode,
      401,
    );
    for (const body of [
      { type: 'payment.completed' },
      { type: 'nope' },
      {},
      { type: 'sell_order.completed', extra: 1 },
    ]) {
      const response = await t.call('POST', '/v1/sandbox/events', merchant.sandbox, body);
      assert.equal(response.statusCode, 400, JSON.stringify(body));
      assert.equal(response.json().error.code, 'VALIDATION_ERROR');
    }
    assert.equal((await t.db.selectFrom('events').select('id').execute()).length, before_count);
  });
});
