import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { dispatchDueWebhooks, RETRY_DELAYS_MS } from '../../src/modules/webhooks/dispatcher.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { startReceiver, type Receiver } from './receiver.ts';

/**
 * An endpoint whose last attempt failed gets one delivery in flight, and failing endpoints together at
 * most a quarter of a worker's slots, so many dead endpoints cannot hold every other merchant's deliveries.
 */
describe('dispatcher: failing endpoints get one slot each and a quarter of a worker', () => {
  let t: TestApp;
  let dead: Receiver;
  let live: Receiver;

  before(async () => {
    t = await startTestApp({
      env: {
        WEBHOOK_TIMEOUT_MS: '4000',
        WORKER_POLL_INTERVAL_MS: '60000',
        WEBHOOK_MAX_IN_FLIGHT: '8',
        WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: '4',
      },
    });
    dead = await startReceiver();
    live = await startReceiver();
    dead.answer = () => 'hang';
  });
  after(async () => {
    await dead.close();
    await live.close();
    await t.close();
  });

  const endpointOf = async (merchant: TestMerchant, url: string) => {
    const response = await t.call('PUT', '/v1/webhook-endpoint', merchant.sandbox, { url });
    assert.equal(response.statusCode, 200, response.body);
    return (
      await t.db
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('merchant_id', '=', merchant.id)
        .where('deleted_at', 'is', null)
        .executeTakeFirstOrThrow()
    ).id;
  };
  const simulate = async (merchant: TestMerchant, scenario: string) =>
    assert.equal(
      (await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, { scenario })).statusCode,
      201,
    );
  const failingSince = async (endpoint_id: string) =>
    (
      await t.db
        .selectFrom('webhook_endpoints')
        .select('failing_since')
        .where('id', '=', endpoint_id)
        .executeTakeFirstOrThrow()
    ).failing_since;

  it('a failed attempt marks its endpoint failing, and its next success clears it', async () => {
    const merchant = await t.createMerchant('Flaky');
    const flaky = await startReceiver();
    try {
      const endpoint_id = await endpointOf(merchant, flaky.url);
      await simulate(merchant, 'matched_then_completed');
      const dispatch = () => dispatchDueWebhooks({ ...t.application.webhooks.dispatch, timeout_ms: 2000 });

      flaky.answer = () => 500;
      const failed_at = t.clock.now();
      assert.equal(await dispatch(), 1, 'the first event of the line');
      assert.deepEqual(await failingSince(endpoint_id), failed_at);

      // a second failure keeps the first failure's time
      t.clock.advance(RETRY_DELAYS_MS[0]!);
      assert.equal(await dispatch(), 1);
      assert.deepEqual(await failingSince(endpoint_id), failed_at);

      flaky.answer = () => 200;
      t.clock.advance(RETRY_DELAYS_MS[1]!);
      assert.equal(await dispatch(), 1);
      assert.equal(await failingSince(endpoint_id), null);
      assert.deepEqual(
        flaky.received.map((hook) => hook.body['type']),
        ['payment.matched', 'payment.matched', 'payment.matched'],
      );
    } finally {
      await flaky.close();
    }
  });

  it('the claim: one line of a failing endpoint at a time, and no more failing rows than the pass allows', async () => {
    const a = await t.createMerchant('Failing A');
    const b = await t.createMerchant('Failing B');
    const c = await t.createMerchant('Healthy C');
    const [a_id, b_id, c_id] = [
      await endpointOf(a, `${live.url}?a`),
      await endpointOf(b, `${live.url}?b`),
      await endpointOf(c, `${live.url}?c`),
    ];
    for (const merchant of [a, b, c]) for (let i = 0; i < 3; i++) await simulate(merchant, 'expired');
    await t.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: t.clock.now() })
      .where('id', 'in', [a_id, b_id])
      .execute();

    const claim = async (failing_batch: number) => {
      const now = t.clock.now();
      const { rows } = await sql<{ endpoint_id: string; failing: boolean }>`
        select endpoint_id, failing from mpay_claim_webhook_deliveries(${now}, ${new Date(now.getTime() + 60_000)}, ${randomUUID()}, 4, 50, 1, ${failing_batch})`.execute(
        t.db,
      );
      const per_endpoint = (id: string) => rows.filter((row) => row.endpoint_id === id);
      return { a: per_endpoint(a_id), b: per_endpoint(b_id), c: per_endpoint(c_id) };
    };
    // 2 failing rows allowed: one per failing endpoint (3 lines each are due); the healthy endpoint gets its 3 lines
    const first = await claim(2);
    assert.deepEqual([first.a.length, first.b.length, first.c.length], [1, 1, 3]);
    assert.deepEqual(
      [...first.a, ...first.b].map((row) => row.failing),
      [true, true],
    );
    assert.deepEqual(
      first.c.map((row) => row.failing),
      [false, false, false],
    );
    // both failing endpoints now hold their one lease: nothing more of theirs, whatever the pass allows
    const second = await claim(50);
    assert.deepEqual([second.a.length, second.b.length], [0, 0]);
    await t.db
      .updateTable('webhook_deliveries')
      .set({ claim_token: null, claimed_until: null })
      .where('endpoint_id', 'in', [a_id, b_id, c_id])
      .execute();
    // a pass with room for one failing row takes the oldest of the two endpoints' lines
    const third = await claim(1);
    assert.equal(third.a.length + third.b.length, 1);
    assert.equal(third.a.length, 1, "A's events are older");
    await t.db
      .updateTable('webhook_deliveries')
      .set({ status: 'skipped', claim_token: null, claimed_until: null })
      .where('endpoint_id', 'in', [a_id, b_id, c_id])
      .where('status', '=', 'pending')
      .execute();
  });

  it("three dead endpoints of busy merchants take at most a quarter of a worker, and another merchant's events arrive at once", async () => {
    const dying = await Promise.all([1, 2, 3].map((i) => t.createMerchant(`Dead ${i}`)));
    const healthy = await t.createMerchant('Healthy');
    const dead_ids = await Promise.all(dying.map((merchant, i) => endpointOf(merchant, `${dead.url}?dead=${i}`)));
    await endpointOf(healthy, live.url);
    // they failed before (set here, as a failed attempt would): each now gets one slot, together 2 of the worker's 8
    await t.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: t.clock.now() })
      .where('id', 'in', dead_ids)
      .execute();
    // nine lines of dead endpoints: under the per-endpoint cap of 4 alone they would take all 8 slots for 4 s
    for (const merchant of dying) for (let i = 0; i < 3; i++) await simulate(merchant, 'expired');
    t.application.scheduler.start();
    await dead.waitFor(2, 5000);

    const before = live.received.length;
    const started = performance.now();
    await simulate(healthy, 'matched_then_completed');
    const hooks = await live.waitFor(before + 2, 3000);
    const elapsed_ms = hooks[before + 1]!.arrived_at_ms - started;
    assert.ok(
      elapsed_ms < 1000,
      `the healthy merchant's events arrived ${Math.round(elapsed_ms)} ms after the simulate, not after the dead endpoints' 4 s`,
    );
    assert.deepEqual(
      hooks.slice(before).map((hook) => hook.body['type']),
      ['payment.matched', 'payment.completed'],
    );

    assert.equal(dead.received.length, 2, 'two dead requests hang: the failing share of 8 slots');
    const leased = await t.db
      .selectFrom('webhook_deliveries')
      .select('endpoint_id')
      .where('endpoint_id', 'in', dead_ids)
      .where('status', '=', 'pending')
      .where('claimed_until', 'is not', null)
      .execute();
    assert.equal(leased.length, 2);
    assert.equal(new Set(leased.map((row) => row.endpoint_id)).size, 2, 'one lease per failing endpoint');
    assert.equal(t.application.webhooks.dispatcher.failing_in_flight, 2);
  });
});
