import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { startReceiver, type Receiver } from './receiver.ts';

/**
 * One slow or dead endpoint must not delay other merchants' deliveries: a dispatcher pass that waited for every send it
 * had claimed would make a new event of another merchant wait for the slow endpoint's timeout.
 */
describe('dispatcher: a slow endpoint holds only its own slots', () => {
  let t: TestApp;
  let slow: Receiver;
  let fast: Receiver;
  let a: TestMerchant;
  let b: TestMerchant;

  before(async () => {
    t = await startTestApp({
      env: {
        WEBHOOK_TIMEOUT_MS: '5000',
        WORKER_POLL_INTERVAL_MS: '60000',
        WEBHOOK_MAX_IN_FLIGHT: '8',
        WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: '2',
      },
    });
    slow = await startReceiver();
    fast = await startReceiver();
    slow.answer = () => 'hang';
  });
  after(async () => {
    await slow.close();
    await fast.close();
    await t.close();
  });

  it("another merchant's event arrives at once while an endpoint takes 5 s, and the slow endpoint gets at most its cap at a time", async () => {
    a = await t.createMerchant('Slow');
    b = await t.createMerchant('Fast');
    assert.equal((await t.call('PUT', '/v1/webhook-endpoint', a.sandbox, { url: slow.url })).statusCode, 200);
    assert.equal((await t.call('PUT', '/v1/webhook-endpoint', b.sandbox, { url: fast.url })).statusCode, 200);
    t.application.scheduler.start();

    // Five resources of merchant A: with the cap at 2, two requests hang at A's endpoint and three wait their turn.
    for (let i = 0; i < 5; i++)
      assert.equal(
        (await t.call('POST', '/v1/sandbox/payments/simulate', a.sandbox, { scenario: 'expired' })).statusCode,
        201,
      );
    await slow.waitFor(2, 5000);

    const started = performance.now();
    assert.equal(
      (await t.call('POST', '/v1/sandbox/payments/simulate', b.sandbox, { scenario: 'matched_then_completed' }))
        .statusCode,
      201,
    );
    const hooks = await fast.waitFor(2, 4000);
    const elapsed_ms = hooks[1]!.arrived_at_ms - started;
    assert.ok(
      elapsed_ms < 1000,
      `B's two events arrived ${Math.round(elapsed_ms)} ms after the simulate, not after A's 5 s`,
    );
    assert.deepEqual(
      hooks.map((hook) => hook.body['type']),
      ['payment.matched', 'payment.completed'],
      'in order',
    );
    assert.equal(slow.received.length, 2, "A's endpoint holds only its cap of in-flight deliveries");
    const leased = await t.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('merchant_id', '=', a.id)
      .where('claimed_until', 'is not', null)
      .where('status', '=', 'pending')
      .execute();
    assert.equal(leased.length, 2);
    assert.ok(t.application.webhooks.dispatcher.in_flight >= 2, 'A is still being waited for');
  });

  it("a backlog at the capped endpoint longer than a pass's batch does not hide another merchant's events", async () => {
    // A pass takes at most its free slots (8 less A's 2 here), capping per endpoint before the batch is cut: cutting
    // the oldest candidates (4x that) first would let 30 older resources of A fill the window and keep B's events out.
    for (let i = 0; i < 27; i++)
      assert.equal(
        (await t.call('POST', '/v1/sandbox/payments/simulate', a.sandbox, { scenario: 'expired' })).statusCode,
        201,
      );
    const started = performance.now();
    assert.equal(
      (await t.call('POST', '/v1/sandbox/payments/simulate', b.sandbox, { scenario: 'matched_then_completed' }))
        .statusCode,
      201,
    );
    const hooks = await fast.waitFor(4, 4000);
    const elapsed_ms = hooks[3]!.arrived_at_ms - started;
    assert.ok(elapsed_ms < 1000, `B's two events arrived ${Math.round(elapsed_ms)} ms after the simulate`);
    assert.deepEqual(
      hooks.slice(2).map((hook) => hook.body['type']),
      ['payment.matched', 'payment.completed'],
    );
    const leased = await t.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('merchant_id', '=', a.id)
      .where('claimed_until', 'is not', null)
      .where('status', '=', 'pending')
      .execute();
    assert.ok(leased.length <= 2, `A holds ${leased.length} leases, more than its cap`);
  });
});
