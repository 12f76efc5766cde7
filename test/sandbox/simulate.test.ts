import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dispatchDueWebhooks } from '../../src/modules/webhooks/dispatcher.ts';
import type { ReceiptValidator } from '../../src/modules/validators/port.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

const SBX_ID = /^sbx_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('sandbox simulate', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let receiver: Receiver;
  let validator_calls = 0;
  let live_seller: string;
  const counting: ReceiptValidator = {
    kind: 'null_validator',
    async validate() {
      validator_calls += 1;
      return { outcome: 'verified', validator_kind: 'null_validator', response: {} };
    },
  } as ReceiptValidator;

  const simulate = (body: Record<string, unknown>, key = merchant.sandbox, headers?: Record<string, string>) =>
    t.call('POST', '/v1/sandbox/payments/simulate', key, body, headers);
  /** The webhooks a simulation sent, in delivery order. */
  const hooksOf = async (payment_id: string) => {
    for (let handled = -1; handled !== 0; )
      handled = await dispatchDueWebhooks({ ...t.application.webhooks.dispatch, timeout_ms: 2000 });
    return receiver.received.filter((hook) => hook.body['payment_id'] === payment_id).map((hook) => hook.body);
  };
  const eventsOf = async (payment_id: string, key = merchant.sandbox) => {
    const list = await t.call('GET', `/v1/events?limit=100`, key);
    return list
      .json()
      .data.filter((event: any) => event.resource_id === payment_id)
      .reverse();
  };

  before(async () => {
    t = await startTestApp({ overrides: { validator: counting } });
    merchant = await t.createMerchant('Sandbox');
    receiver = await startReceiver();
    await t.call('PUT', '/v1/webhook-endpoint', merchant.test, { url: receiver.url });
    live_seller = (await t.createSeller(thbSeller(5_000_000))).id;
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  it('matched_then_completed: completed, synthetic_match, payment.matched then payment.completed, defaults 10000 THB', async () => {
    const response = await simulate({ scenario: 'matched_then_completed' });
    assert.equal(response.statusCode, 201, response.body);
    const { scenario, payment } = response.json().data;
    assert.equal(scenario, 'matched_then_completed');
    assert.match(payment.id, SBX_ID);
    assert.equal(payment.status, 'completed');
    assert.equal(payment.amount, 10000);
    assert.equal(payment.currency, 'THB');
    assert.equal(payment.payment_method, 'promptpay');
    assert.equal(payment.is_sandbox, true);
    assert.ok(payment.completed_at);
    assert.equal(payment.match_details.length, 1);
    const tokens = payment.synthetic_match.tokens;
    assert.equal(typeof tokens.chosen_amount, 'number');
    assert.ok(tokens.chosen_amount > 0);
    assert.equal(typeof tokens.rate, 'number');
    assert.ok(Number.isInteger(tokens.match_order));
    assert.equal(typeof tokens.status, 'string');
    const hooks = await hooksOf(payment.id);
    assert.deepEqual(
      hooks.map((hook) => hook['event']),
      ['payment.matched', 'payment.completed'],
    );
    assert.ok(
      hooks.every((hook) => hook['sandbox'] === true && hook['amount'] === 10000 && hook['currency'] === 'THB'),
    );
    assert.equal(hooks[1]!['status'], 'completed');
  });

  it('matched_then_failed: failed with a failure_reason; payment.matched then payment.failed', async () => {
    const response = await simulate({ scenario: 'matched_then_failed', amount: 2500, currency: 'AUD' });
    assert.equal(response.statusCode, 201, response.body);
    const { payment } = response.json().data;
    assert.equal(payment.status, 'failed');
    assert.equal(payment.failure_reason, 'sandbox_simulated_failure');
    assert.equal(payment.currency, 'AUD');
    assert.equal(payment.payment_method, 'payid');
    assert.ok(payment.synthetic_match);
    assert.deepEqual(
      (await hooksOf(payment.id)).map((hook) => hook['event']),
      ['payment.matched', 'payment.failed'],
    );
  });

  it('expired: a single payment.expired, no match, no funds move', async () => {
    const response = await simulate({ scenario: 'expired' });
    const { payment } = response.json().data;
    assert.equal(payment.status, 'expired');
    assert.equal(payment.synthetic_match, undefined);
    assert.deepEqual(payment.match_details, []);
    assert.deepEqual(
      (await hooksOf(payment.id)).map((hook) => hook['event']),
      ['payment.expired'],
    );
    assert.deepEqual(
      (await eventsOf(payment.id)).map((event: any) => event.type),
      ['payment.expired'],
    );
  });

  it('settlement_cycle: settled; payment.matched, payment.completed, settlement.completed', async () => {
    const response = await simulate({ scenario: 'settlement_cycle' });
    assert.equal(response.statusCode, 201, response.body);
    const { payment } = response.json().data;
    assert.equal(payment.status, 'settled');
    assert.ok(payment.synthetic_match);
    const { settlement_id } = await t.db
      .selectFrom('payments')
      .select('settlement_id')
      .where('id', '=', payment.id)
      .executeTakeFirstOrThrow();
    assert.ok(settlement_id);
    const listed = (await t.call('GET', '/v1/events?limit=100', merchant.sandbox)).json().data.reverse();
    const events = listed.filter(
      (event: any) => event.resource_id === payment.id || event.resource_id === settlement_id,
    );
    assert.deepEqual(
      events.map((event: any) => event.type),
      ['payment.matched', 'payment.completed', 'settlement.completed'],
    );
    assert.equal(events[2].payload.sandbox, true);
    const settlements = await t.call('GET', '/v1/settlements', merchant.sandbox);
    assert.equal(settlements.statusCode, 200);
    assert.ok(settlements.json().data.length >= 1);
    // Delivered in order too (different resources, so compare the event order of arrival).
    await hooksOf(payment.id);
    const arrival = receiver.received.map((hook) => hook.body['id']);
    const ids = events.map((event: any) => event.id);
    assert.deepEqual(
      arrival.filter((id) => ids.includes(id)),
      ids,
      'settlement.completed is delivered after the payment events',
    );
  });

  it('matched_partial_fill: two legs 65 % / remainder with distinct sellers, in match_details of the webhooks', async () => {
    const response = await simulate({ scenario: 'matched_partial_fill', amount: 10001 });
    const { payment } = response.json().data;
    assert.equal(payment.status, 'completed');
    assert.equal(payment.match_details.length, 2);
    const [first, second] = payment.match_details;
    assert.equal(first.allocated_fiat_amount, 6500, '65 % of 10001 rounded down');
    assert.equal(second.allocated_fiat_amount, 3501);
    assert.equal(first.match_order, 1);
    assert.equal(second.match_order, 2);
    assert.notEqual(first.seller_id, second.seller_id);
    const hooks = await hooksOf(payment.id);
    assert.deepEqual(
      hooks.map((hook) => hook['event']),
      ['payment.matched', 'payment.completed'],
    );
    for (const hook of hooks) {
      assert.equal(hook['match_details'].length, 2);
      assert.deepEqual(
        hook['match_details'].map((leg: any) => leg.allocated_fiat_amount),
        [6500, 3501],
      );
      assert.equal(new Set(hook['match_details'].map((leg: any) => leg.seller_id)).size, 2);
    }
    const tiny = await simulate({ scenario: 'matched_partial_fill', amount: 1 });
    assert.equal(tiny.statusCode, 400);
    assert.equal(tiny.json().error.code, 'VALIDATION_ERROR');
  });

  it('refuses a live key (403 SANDBOX_ONLY), no key (401) and bad bodies (400), leaving no row', async () => {
    const before_count = await t.db
      .selectFrom('payments')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    const live = await simulate({ scenario: 'matched_then_completed' }, merchant.live);
    assert.equal(live.statusCode, 403);
    assert.equal(live.json().error.code, 'SANDBOX_ONLY');
    assert.equal(
      (await t.call('POST', '/v1/sandbox/payments/simulate', undefined, { scenario: 'matched_then_completed' }))
        .statusCode,
      401,
    );
    assert.equal((await simulate({ scenario: 'matched_then_completed' }, 'svc_sandbox_nope')).statusCode, 401);
    for (const body of [
      {},
      { scenario: 'refunded' },
      { scenario: 'expired', amount: 0 },
      { scenario: 'expired', amount: 1.5 },
      { scenario: 'expired', currency: 'EUR' },
      { scenario: 'expired', payment_method: 'payid' },
      { scenario: 'expired', extra: 1 },
    ]) {
      const response = await simulate(body);
      assert.equal(response.statusCode, 400, JSON.stringify(body));
      assert.equal(response.json().error.code, 'VALIDATION_ERROR');
    }
    const after_count = await t.db
      .selectFrom('payments')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(after_count.n, before_count.n);
  });

  it('accepts the test key as well; a duplicate order_id is 409; Idempotency-Key replays', async () => {
    const a = await simulate({ scenario: 'expired', order_id: 'sbx-order-1' }, merchant.test);
    assert.equal(a.statusCode, 201);
    const dup = await simulate({ scenario: 'expired', order_id: 'sbx-order-1' });
    assert.equal(dup.statusCode, 409);
    assert.equal(dup.json().error.code, 'PAYMENT_DUPLICATE_ORDER_ID');
    const key = '5b0c1f0e-5d0a-4c7e-9d55-3f0a5e2d9a11';
    const first = await simulate({ scenario: 'matched_then_completed' }, merchant.sandbox, { 'idempotency-key': key });
    const again = await simulate({ scenario: 'matched_then_completed' }, merchant.sandbox, { 'idempotency-key': key });
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.json().data.payment.id, first.json().data.payment.id);
    const conflict = await simulate({ scenario: 'expired' }, merchant.sandbox, { 'idempotency-key': key });
    assert.equal(conflict.json().error.code, 'IDEMPOTENCY_KEY_CONFLICT');
  });

  it('never calls the validator, never touches live rows, and live keys do not see sandbox payments or events', async () => {
    const seller = async () =>
      t.db
        .selectFrom('sellers')
        .select(['liquidity_minor', 'reserved_minor'])
        .where('id', '=', live_seller)
        .executeTakeFirstOrThrow();
    const before_seller = await seller();
    const results = await Promise.all(
      ['matched_then_completed', 'matched_then_failed', 'expired', 'settlement_cycle', 'matched_partial_fill'].flatMap(
        (scenario) => [simulate({ scenario }), simulate({ scenario }, merchant.test)],
      ),
    );
    assert.ok(results.every((response) => response.statusCode === 201));
    assert.equal(validator_calls, 0);
    assert.deepEqual(await seller(), before_seller);
    const live_rows = await t.db.selectFrom('payments').select('id').where('is_sandbox', '=', false).execute();
    assert.equal(live_rows.length, 0);
    const live_events = await t.db.selectFrom('events').select('id').where('is_sandbox', '=', false).execute();
    assert.equal(live_events.length, 0);
    const sandbox_id = results[0]!.json().data.payment.id;
    assert.equal((await t.call('GET', `/v1/payments/${sandbox_id}`, merchant.live)).statusCode, 404);
    assert.equal((await t.call('GET', `/v1/payments/${sandbox_id}`, merchant.sandbox)).json().data.status, 'completed');
    assert.equal((await t.call('GET', '/v1/events', merchant.live)).json().data.length, 0);
    assert.equal((await t.call('GET', '/v1/webhook-deliveries', merchant.live)).json().data.length, 0);
    const other = await t.createMerchant('Other');
    assert.equal((await t.call('GET', `/v1/payments/${sandbox_id}`, other.sandbox)).statusCode, 404);
    assert.equal((await t.call('GET', '/v1/events', other.sandbox)).json().data.length, 0);
  });

  it('is rate limited per key on the sandbox bucket (429 RATE_LIMITED)', async () => {
    const limited = await startTestApp({ env: { RATE_LIMIT_SANDBOX_PER_SECOND: '3' } });
    try {
      const m = await limited.createMerchant('Limited');
      const responses = await Promise.all(
        Array.from({ length: 8 }, () =>
          limited.call('POST', '/v1/sandbox/payments/simulate', m.sandbox, { scenario: 'expired' }),
        ),
      );
      const statuses = responses.map((response) => response.statusCode);
      assert.ok(statuses.filter((status) => status === 201).length <= 3 + 1, statuses.join(','));
      const refused = responses.find((response) => response.statusCode === 429);
      assert.ok(refused, statuses.join(','));
      assert.equal(refused.json().error.code, 'RATE_LIMITED');
      assert.ok(refused.headers['retry-after']);
    } finally {
      await limited.close();
    }
  });
});
