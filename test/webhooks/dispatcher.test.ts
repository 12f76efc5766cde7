import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { openDatabase } from '../../src/db/database.ts';
import {
  claimLeaseMs,
  dispatchDueWebhooks,
  MAX_ATTEMPTS,
  RETRY_DELAYS_MS,
  WebhookDispatcher,
} from '../../src/modules/webhooks/dispatcher.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { startReceiver, type Receiver } from './receiver.ts';

const SERVICE_SIGNATURE = /^[0-9a-f]{64}$/;

describe('webhook dispatcher', () => {
  let t: TestApp;
  let receiver: Receiver;
  let merchant: TestMerchant;
  let secret: string;
  const dispatch = (timeout_ms = 2000) => dispatchDueWebhooks({ ...t.application.webhooks.dispatch, timeout_ms });
  /** Runs passes until nothing is due now. */
  const drain = async () => {
    let total = 0;
    for (let handled = await dispatch(); handled > 0; handled = await dispatch()) total += handled;
    return total;
  };
  const simulate = async (scenario: string, extra: Record<string, unknown> = {}, key = merchant.sandbox) => {
    const response = await t.call('POST', '/v1/sandbox/payments/simulate', key, { scenario, ...extra });
    assert.equal(response.statusCode, 201, response.body);
    return response.json().data.payment as { id: string; status: string };
  };

  before(async () => {
    t = await startTestApp();
    receiver = await startReceiver();
    merchant = await t.createMerchant('Hooks');
    // Sandbox events go to sandbox endpoints only: a sandbox key sets the sandbox default endpoint.
    const set = await t.call('PUT', '/v1/webhook-endpoint', merchant.sandbox, { url: receiver.url });
    assert.equal(set.statusCode, 200, set.body);
    secret = set.json().data.secret;
    await t.createSeller(thbSeller());
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });
  beforeEach(async () => {
    // Nothing left over from an earlier test is due.
    t.clock.advance(8 * 24 * 3600 * 1000);
    receiver.answer = () => 200;
    await drain();
    receiver.received.length = 0;
  });

  it('signs the exact bytes with both schemes, verified by an independent computation', async () => {
    const payment = await simulate('matched_then_completed');
    assert.equal(await drain(), 2);
    assert.equal(receiver.received.length, 2);
    for (const hook of receiver.received) {
      const signature = hook.headers['x-service-signature'] as string;
      assert.match(signature, SERVICE_SIGNATURE);
      assert.equal(signature, createHmac('sha256', Buffer.from(secret, 'utf8')).update(hook.raw).digest('hex'));
      const id = hook.headers['webhook-id'] as string;
      const timestamp = hook.headers['webhook-timestamp'] as string;
      assert.equal(id, hook.body['id']);
      assert.equal(Number(timestamp), Math.floor(t.clock.now().getTime() / 1000));
      const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
      const expected = createHmac('sha256', key)
        .update(Buffer.concat([Buffer.from(`${id}.${timestamp}.`), hook.raw]))
        .digest('base64');
      assert.equal(hook.headers['webhook-signature'], `v1,${expected}`);
      assert.equal(hook.headers['content-type'], 'application/json');
      // A changed byte breaks the signature.
      const tampered = Buffer.from(hook.raw);
      tampered.writeUInt8(tampered.readUInt8(tampered.length - 2) ^ 1, tampered.length - 2);
      assert.notEqual(createHmac('sha256', secret).update(tampered).digest('hex'), signature);
    }
    const [matched, completed] = receiver.received.map((hook) => hook.body);
    assert.equal(matched!['event'], 'payment.matched');
    assert.equal(matched!['type'], 'payment.matched');
    assert.equal(completed!['event'], 'payment.completed');
    for (const body of [matched!, completed!]) {
      assert.equal(body['idempotency_key'], body['id']);
      assert.match(body['id'], /^evt_/);
      assert.match(body['timestamp'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(body['sandbox'], true);
      assert.equal(body['payment_id'], payment.id);
      assert.equal(body['amount'], 10000);
      assert.equal(body['currency'], 'THB');
      assert.equal(body['data'].id, payment.id);
      assert.equal(typeof body['order_id'], 'string');
    }
    assert.equal(completed!['status'], 'completed');
    assert.equal(completed!['data'].status, 'completed');
  });

  it('retries on the schedule with an injected clock, then gives up after the last attempt', async () => {
    receiver.answer = () => 500;
    await simulate('expired');
    assert.equal(await dispatch(), 1);
    const delivery_of = async () => {
      const list = await t.call('GET', '/v1/webhook-deliveries?limit=1', merchant.sandbox);
      return list.json().data[0];
    };
    let delivery = await delivery_of();
    assert.equal(delivery.attempt_count, 1);
    assert.equal(delivery.status, 'pending');
    for (const [index, delay_ms] of RETRY_DELAYS_MS.entries()) {
      assert.equal(
        new Date(delivery.next_attempt_at).getTime() - t.clock.now().getTime(),
        delay_ms,
        `wait after failure ${index + 1}`,
      );
      t.clock.advance(delay_ms - 1);
      assert.equal(await dispatch(), 0, 'not due one millisecond early');
      t.clock.advance(1);
      assert.equal(await dispatch(), 1);
      delivery = await delivery_of();
      assert.equal(delivery.attempt_count, index + 2);
    }
    assert.equal(delivery.status, 'failed');
    assert.equal(delivery.attempt_count, MAX_ATTEMPTS);
    assert.equal(delivery.next_attempt_at, null);
    assert.equal(delivery.attempts.length, MAX_ATTEMPTS);
    assert.deepEqual(
      delivery.attempts.map((a: any) => a.attempt_number),
      Array.from({ length: MAX_ATTEMPTS }, (_, i) => i + 1),
    );
    // the receiver is on loopback: what a private target answers is never kept
    assert.ok(
      delivery.attempts.every(
        (a: any) => a.status_code === 500 && a.succeeded === false && a.response_excerpt === null,
      ),
    );
    assert.equal(
      RETRY_DELAYS_MS.reduce((sum, ms) => sum + ms, 0),
      68 * 3600_000 + 36 * 60_000 + 5_000,
      'about 3 days in all (2 d 20 h 36 min 5 s)',
    );
    t.clock.advance(30 * 24 * 3600_000);
    assert.equal(await dispatch(), 0);
    assert.equal(receiver.received.length, MAX_ATTEMPTS);
  });

  it('delivers the events of one resource in order, while other resources go ahead', async () => {
    const first = await simulate('matched_then_completed');
    let failing = true;
    receiver.answer = (hook) => (failing && hook.body['payment_id'] === first.id ? 503 : 200);
    const second = await simulate('matched_then_failed');
    await drain();
    // first: payment.matched failed once; payment.completed waits behind it. second: both delivered in order.
    const of = (id: string) =>
      receiver.received
        .filter((hook) => hook.body['payment_id'] === id)
        .map((hook) => hook.headers['webhook-id'] && hook.body['event']);
    assert.deepEqual(of(first.id), ['payment.matched']);
    assert.deepEqual(of(second.id), ['payment.matched', 'payment.failed']);
    t.clock.advance(RETRY_DELAYS_MS[0]!);
    assert.equal(await dispatch(), 1, 'only the head of the resource is claimable');
    t.clock.advance(RETRY_DELAYS_MS[1]!);
    failing = false;
    await drain();
    assert.deepEqual(of(first.id), ['payment.matched', 'payment.matched', 'payment.matched', 'payment.completed']);
  });

  it('times out a hanging endpoint and records the attempt', async () => {
    receiver.answer = () => 'hang';
    await simulate('expired');
    assert.equal(await dispatch(200), 1);
    const delivery = (await t.call('GET', '/v1/webhook-deliveries?limit=1', merchant.sandbox)).json().data[0];
    assert.equal(delivery.status, 'pending');
    assert.equal(delivery.attempts[0].status_code, null);
    assert.match(delivery.attempts[0].error, /timeout after 200 ms/);
    assert.ok(delivery.attempts[0].duration_ms >= 150);
  });

  it('redelivers one event by hand with the same event id, and recovers failures since a time', async () => {
    await simulate('expired');
    await drain();
    const [hook] = receiver.received;
    const delivery = (
      await t.call('GET', `/v1/webhook-deliveries?event_id=${hook!.body['id']}`, merchant.sandbox)
    ).json().data[0];
    assert.equal(delivery.status, 'succeeded');
    const redo = await t.call('POST', `/v1/webhook-deliveries/${delivery.id}/redeliver`, merchant.sandbox);
    assert.equal(redo.statusCode, 200, redo.body);
    assert.equal(redo.json().data.status, 'pending');
    assert.equal(await drain(), 1);
    assert.equal(receiver.received.length, 2);
    assert.equal(receiver.received[1]!.body['id'], hook!.body['id']);
    assert.equal(receiver.received[1]!.headers['webhook-id'], hook!.body['id']);
    assert.deepEqual(receiver.received[1]!.raw, hook!.raw, 'the same bytes');
    const after_redo = (
      await t.call('GET', `/v1/webhook-deliveries?event_id=${hook!.body['id']}`, merchant.sandbox)
    ).json().data[0];
    assert.equal(after_redo.attempt_count, 2);
    assert.equal(after_redo.status, 'succeeded');

    // Errors: unknown id, another mode's delivery, another merchant's delivery, a bad id.
    assert.equal(
      (
        await t.call('POST', '/v1/webhook-deliveries/00000000-0000-4000-8000-000000000000/redeliver', merchant.sandbox)
      ).json().error.code,
      'NOT_FOUND',
    );
    assert.equal(
      (await t.call('POST', `/v1/webhook-deliveries/${delivery.id}/redeliver`, merchant.live)).statusCode,
      404,
    );
    const other = await t.createMerchant('Other');
    assert.equal(
      (await t.call('POST', `/v1/webhook-deliveries/${delivery.id}/redeliver`, other.sandbox)).statusCode,
      404,
    );
    assert.equal(
      (await t.call('POST', '/v1/webhook-deliveries/not-a-uuid/redeliver', merchant.sandbox)).statusCode,
      400,
    );
    assert.equal((await t.call('POST', `/v1/webhook-deliveries/${delivery.id}/redeliver`, undefined)).statusCode, 401);

    // Recover: everything failed since a time goes out again.
    receiver.answer = () => 500;
    const since = t.clock.now().toISOString();
    await simulate('expired');
    await simulate('expired');
    // a failing endpoint gets one delivery at a time: each pass sends one, every retry due at once
    for (let pass = 0; pass < 2 * MAX_ATTEMPTS; pass++) {
      await dispatch();
      t.clock.advance(Math.max(...RETRY_DELAYS_MS));
    }
    const failed = await t.call('GET', '/v1/webhook-deliveries?status=failed&limit=100', merchant.sandbox);
    const failed_since = failed.json().data.filter((row: any) => row.created_at >= since);
    assert.equal(failed_since.length, 2);
    const failed_before = failed.json().data.length - 2;
    receiver.answer = () => 200;
    receiver.received.length = 0;
    const recover = await t.call('POST', '/v1/webhook-deliveries/recover', merchant.sandbox, { since });
    assert.equal(recover.statusCode, 200, recover.body);
    assert.equal(recover.json().data.requeued, 2);
    assert.equal(await drain(), 2);
    assert.equal(receiver.received.length, 2);
    assert.equal(
      (await t.call('GET', '/v1/webhook-deliveries?status=failed&limit=100', merchant.sandbox)).json().data.length,
      failed_before,
      'older failures stay failed',
    );
    assert.equal(
      (await t.call('POST', '/v1/webhook-deliveries/recover', merchant.sandbox, { since: 'yesterday' })).statusCode,
      400,
    );
  });

  it('without an endpoint: skipped, 409 WEBHOOK_ENDPOINT_NOT_SET on redeliver and recover, delivered after recover', async () => {
    const lonely = await t.createMerchant('No endpoint');
    const since = t.clock.now().toISOString();
    const sim = await t.call('POST', '/v1/sandbox/payments/simulate', lonely.sandbox, { scenario: 'expired' });
    assert.equal(sim.statusCode, 201);
    await drain();
    const list = (await t.call('GET', '/v1/webhook-deliveries', lonely.sandbox)).json();
    assert.equal(list.data.length, 1);
    assert.equal(list.data[0].status, 'skipped');
    assert.equal(list.data[0].attempt_count, 0);
    const redo = await t.call('POST', `/v1/webhook-deliveries/${list.data[0].id}/redeliver`, lonely.sandbox);
    assert.equal(redo.statusCode, 409);
    assert.equal(redo.json().error.code, 'WEBHOOK_ENDPOINT_NOT_SET');
    const recover = await t.call('POST', '/v1/webhook-deliveries/recover', lonely.sandbox, { since });
    assert.equal(recover.json().error.code, 'WEBHOOK_ENDPOINT_NOT_SET');
    await t.call('PUT', '/v1/webhook-endpoint', lonely.test, { url: receiver.url });
    assert.equal(
      (await t.call('POST', '/v1/webhook-deliveries/recover', lonely.sandbox, { since })).json().data.requeued,
      1,
    );
    await drain();
    assert.equal(receiver.received.length, 1);
    assert.equal(receiver.received[0]!.body['payment_id'], sim.json().data.payment.id);
  });

  it('two concurrent dispatchers send each event exactly once, in order per resource', async () => {
    const payments = await Promise.all(
      Array.from({ length: 12 }, (_, i) => simulate(i % 2 ? 'matched_then_completed' : 'settlement_cycle')),
    );
    // A second, independent connection pool on PostgreSQL; on PGlite the same single connection.
    const url = t.application.config.database_url;
    const second = url ? await openDatabase({ database_url: url, data_dir: '' }) : undefined;
    try {
      const worker = async (db: typeof t.db) => {
        let sent = 0;
        for (let handled = -1; handled !== 0; ) {
          handled = await dispatchDueWebhooks({ ...t.application.webhooks.dispatch, db, timeout_ms: 2000, batch: 3 });
          sent += handled;
        }
        return sent;
      };
      const counts = await Promise.all([
        worker(t.db),
        worker(second?.db ?? t.db),
        worker(t.db),
        worker(second?.db ?? t.db),
      ]);
      await drain();
      const expected_events = 6 * 2 + 6 * 3;
      assert.equal(receiver.received.length, expected_events, `sent ${counts.join('+')}`);
      const ids = receiver.received.map((hook) => hook.body['id']);
      assert.equal(new Set(ids).size, expected_events, 'no event sent twice');
      for (const payment of payments) {
        const order = receiver.received
          .filter((hook) => hook.body['payment_id'] === payment.id)
          .map((hook) => hook.body['event']);
        assert.deepEqual(order, ['payment.matched', 'payment.completed']);
      }
      const succeeded = await t.call('GET', '/v1/webhook-deliveries?status=succeeded&limit=100', merchant.sandbox);
      const ours = succeeded.json().data.filter((delivery: any) => ids.includes(delivery.event_id));
      assert.equal(ours.length, expected_events);
      assert.ok(ours.every((delivery: any) => delivery.attempt_count === 1));
    } finally {
      await second?.close();
    }
  });

  it("the worker's dispatcher hands a finished send's slot to the next event of its line: one pass sends a resource's events in order", async () => {
    await drain();
    const offset = receiver.received.length;
    const payment = await simulate('settlement_cycle');
    const dispatcher = new WebhookDispatcher({
      ...t.application.webhooks.dispatch,
      timeout_ms: 2000,
      max_in_flight: 4,
    });
    assert.equal(await dispatcher.pass(), 1, 'one event of the line is claimable');
    await dispatcher.drain();
    const hooks = receiver.received.slice(offset);
    assert.deepEqual(
      hooks.map((hook) => hook.body['event']),
      ['payment.matched', 'payment.completed', 'settlement.completed'],
    );
    assert.ok(hooks.slice(0, 2).every((hook) => hook.body['payment_id'] === payment.id));
    assert.equal(await dispatch(), 0, 'nothing left for a pass');
  });

  it('two worker dispatchers with chained sends still send each event exactly once, in order per resource', async () => {
    await drain();
    const offset = receiver.received.length;
    const payments = await Promise.all(
      Array.from({ length: 12 }, (_, i) => simulate(i % 2 ? 'matched_then_completed' : 'settlement_cycle')),
    );
    const url = t.application.config.database_url;
    const second = url ? await openDatabase({ database_url: url, data_dir: '' }) : undefined;
    try {
      const worker = async (db: typeof t.db) => {
        const dispatcher = new WebhookDispatcher({
          ...t.application.webhooks.dispatch,
          db,
          timeout_ms: 2000,
          batch: 3,
          max_in_flight: 3,
        });
        for (let idle = 0; idle < 3; ) {
          const started = await dispatcher.pass();
          idle = started === 0 && dispatcher.in_flight === 0 ? idle + 1 : 0;
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
        await dispatcher.drain();
      };
      await Promise.all([worker(t.db), worker(second?.db ?? t.db), worker(t.db), worker(second?.db ?? t.db)]);
      await drain();
      const hooks = receiver.received.slice(offset);
      const expected_events = 6 * 2 + 6 * 3;
      assert.equal(hooks.length, expected_events);
      assert.equal(new Set(hooks.map((hook) => hook.body['id'])).size, expected_events, 'no event sent twice');
      for (const payment of payments) {
        const order = hooks.filter((hook) => hook.body['payment_id'] === payment.id).map((hook) => hook.body['event']);
        assert.deepEqual(order, ['payment.matched', 'payment.completed']);
      }
      const attempts = await t.db
        .selectFrom('webhook_attempts as a')
        .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
        .select('d.event_id')
        .where(
          'd.event_id',
          'in',
          hooks.map((hook) => hook.body['id'] as string),
        )
        .execute();
      assert.equal(attempts.length, expected_events, 'one attempt each');
    } finally {
      await second?.close();
    }
  });

  /**
   * Sends one event of each of three payments while the attempt of the middle one cannot be recorded (the database
   * refuses its row); `run` is one pass that returns once every send is settled.
   */
  const withUnrecordableDelivery = async (run: () => Promise<number>) => {
    const payments = [await simulate('expired'), await simulate('expired'), await simulate('expired')];
    const deliveryOf = (payment_id: string) =>
      t.db
        .selectFrom('webhook_deliveries')
        .select(['id', 'event_id', 'status', 'attempt_count'])
        .where('resource_id', '=', payment_id)
        .executeTakeFirstOrThrow();
    const poisoned = await deliveryOf(payments[1]!.id);
    await sql`create or replace function test_refuse_attempt() returns trigger language plpgsql as $$
      begin raise exception 'test: this attempt cannot be recorded'; end $$`.execute(t.db);
    await sql`create trigger test_refuse_attempt before insert on webhook_attempts for each row
      when (new.delivery_id = ${sql.lit(poisoned.id)}::uuid) execute function test_refuse_attempt()`.execute(t.db);
    try {
      assert.equal(await run(), 3, 'all three claimed and sent');
    } finally {
      await sql`drop trigger test_refuse_attempt on webhook_attempts`.execute(t.db);
    }
    assert.equal(receiver.received.length, 3);
    const [first, middle, last] = await Promise.all(payments.map((payment) => deliveryOf(payment.id)));
    assert.deepEqual(
      [first!.status, last!.status, first!.attempt_count, last!.attempt_count],
      ['succeeded', 'succeeded', 1, 1],
      'the others are recorded',
    );
    assert.deepEqual([middle!.status, middle!.attempt_count], ['pending', 0], 'nothing of the refused record is kept');
    // its lease runs out, and it goes out again with the same event id
    assert.equal(await dispatch(), 0, 'leased until then');
    t.clock.advance(claimLeaseMs(2000) + 1);
    assert.equal(await dispatch(), 1);
    assert.equal(receiver.received[3]!.body['id'], poisoned.event_id);
    assert.deepEqual(
      [(await deliveryOf(payments[1]!.id)).status, (await deliveryOf(payments[1]!.id)).attempt_count],
      ['succeeded', 1],
    );
    return poisoned.id;
  };

  it('a delivery whose attempt cannot be recorded holds back no other: one pass of dispatchDueWebhooks', async () => {
    await withUnrecordableDelivery(() => dispatch());
  });

  it("a delivery whose attempt cannot be recorded holds back no other: the worker's dispatcher logs it and frees its slot", async () => {
    const logged: string[] = [];
    const logger = {
      error: (fields: { delivery_id: string }) => logged.push(fields.delivery_id),
      warn: () => {},
    } as unknown as Logger;
    const dispatcher = new WebhookDispatcher({
      ...t.application.webhooks.dispatch,
      logger,
      timeout_ms: 2000,
      max_in_flight: 4,
    });
    const poisoned = await withUnrecordableDelivery(async () => {
      const started = await dispatcher.pass();
      await dispatcher.drain();
      return started;
    });
    assert.equal(dispatcher.in_flight, 0);
    assert.deepEqual(logged, [poisoned]);
  });

  it('wakes at once on a new event when the worker runs (LISTEN/NOTIFY), no poll wait', async () => {
    const app = await startTestApp({ env: { WORKER_POLL_INTERVAL_MS: '60000' } });
    const own = await startReceiver();
    try {
      const m = await app.createMerchant('Listener');
      await app.call('PUT', '/v1/webhook-endpoint', m.sandbox, { url: own.url });
      app.application.scheduler.start();
      // Let the first (empty) passes finish so only the NOTIFY can trigger the next one.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const started = performance.now();
      const sim = await app.call('POST', '/v1/sandbox/payments/simulate', m.sandbox, {
        scenario: 'matched_then_completed',
      });
      assert.equal(sim.statusCode, 201);
      const hooks = await own.waitFor(2, 5000);
      assert.ok(hooks[1]!.arrived_at_ms - started < 5000);
      assert.deepEqual(
        hooks.map((hook) => hook.body['event']),
        ['payment.matched', 'payment.completed'],
      );
    } finally {
      await own.close();
      await app.close();
    }
  });
});
