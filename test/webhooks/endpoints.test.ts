import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { dispatchDueWebhooks } from '../../src/modules/webhooks/dispatcher.ts';
import { emitBuyOrderEvents } from '../../src/modules/buy-orders/service.ts';
import type { BuyOrderRow } from '../../src/modules/buy-orders/tables.ts';
import { createEndpoint, listEndpoints, MAX_ENDPOINTS_PER_MODE } from '../../src/modules/webhooks/endpoints.ts';
import { verifyServiceSignature, verifyStandardSignature } from '../../clients/typescript/src/webhooks.js';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { startReceiver, type Receiver } from './receiver.ts';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

describe('webhook endpoints per mode (/v1/webhook-endpoints)', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let other: TestMerchant;
  let receiver: Receiver;
  const drain = async () => {
    let total = 0;
    for (let handled = -1; handled !== 0; total += handled)
      handled = await dispatchDueWebhooks({ ...t.application.webhooks.dispatch, timeout_ms: 2000 });
    return total;
  };
  const receiverAt = (path: string) => receiver.url.replace(/\/hooks$/, path);
  const deleteAll = async (key: string) => {
    for (const endpoint of (await t.call('GET', '/v1/webhook-endpoints', key)).json().data)
      await t.call('DELETE', `/v1/webhook-endpoints/${endpoint.id}`, key);
  };

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Endpoints');
    other = await t.createMerchant('Other');
    receiver = await startReceiver();
    await t.createSeller(thbSeller());
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });
  beforeEach(async () => {
    t.clock.advance(8 * 24 * 3600_000);
    await drain();
    receiver.received.length = 0;
    receiver.answer = () => 200;
    for (const key of [merchant.live, merchant.sandbox]) await deleteAll(key);
  });

  it('creates, lists, reads, changes, rotates and deletes an endpoint; the secret is shown only on create and rotate', async () => {
    const created = await t.call('POST', '/v1/webhook-endpoints', merchant.sandbox, {
      url: receiverAt('/a'),
      description: 'orders',
      enabled_events: ['payment.completed', 'payment.completed'],
    });
    assert.equal(created.statusCode, 201, created.body);
    const endpoint = created.json().data;
    assert.match(endpoint.secret, /^whsec_/);
    assert.equal(endpoint.url, receiverAt('/a'));
    assert.equal(endpoint.description, 'orders');
    assert.deepEqual(endpoint.enabled_events, ['payment.completed']);
    assert.equal(endpoint.disabled, false);
    assert.equal(endpoint.is_default, false);
    assert.equal(endpoint.mode, 'sandbox');
    assert.equal(endpoint.previous_secret_expires_at, null);

    const list = await t.call('GET', '/v1/webhook-endpoints', merchant.sandbox);
    assert.equal(list.statusCode, 200);
    assert.deepEqual(
      list.json().data.map((row: any) => row.id),
      [endpoint.id],
    );
    assert.ok(!list.body.includes('whsec_'), 'never the secret');
    const read = await t.call('GET', `/v1/webhook-endpoints/${endpoint.id}`, merchant.sandbox);
    assert.equal(read.statusCode, 200);
    assert.ok(!read.body.includes('whsec_'));
    const { secret: _secret, ...without_secret } = endpoint;
    assert.deepEqual(read.json().data, without_secret);

    const patched = await t.call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, merchant.sandbox, {
      enabled_events: ['payment.matched', '*'],
      description: null,
      disabled: true,
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual(patched.json().data.enabled_events, ['*'], '* anywhere means every type');
    assert.equal(patched.json().data.description, null);
    assert.equal(patched.json().data.disabled, true);

    const rotated = await t.call('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, merchant.sandbox);
    assert.equal(rotated.statusCode, 200, rotated.body);
    assert.notEqual(rotated.json().data.secret, endpoint.secret);
    assert.equal(
      rotated.json().data.previous_secret_expires_at,
      new Date(t.clock.now().getTime() + 24 * 3600_000).toISOString(),
      'default overlap: 24 h',
    );

    const deleted = await t.call('DELETE', `/v1/webhook-endpoints/${endpoint.id}`, merchant.sandbox);
    assert.equal(deleted.statusCode, 200);
    assert.deepEqual(deleted.json().data, { id: endpoint.id, deleted: true });
    assert.equal((await t.call('GET', `/v1/webhook-endpoints/${endpoint.id}`, merchant.sandbox)).statusCode, 404);
    assert.deepEqual((await t.call('GET', '/v1/webhook-endpoints', merchant.sandbox)).json().data, []);
    assert.equal(
      (await t.call('DELETE', `/v1/webhook-endpoints/${endpoint.id}`, merchant.sandbox)).statusCode,
      404,
      'deleted once',
    );
  });

  it('answers 401 without a credential on every route, 400 on bad input, 404 on an unknown id', async () => {
    const id = (await t.call('POST', '/v1/webhook-endpoints', merchant.sandbox, { url: receiver.url })).json().data.id;
    for (const [method, url] of [
      ['POST', '/v1/webhook-endpoints'],
      ['GET', '/v1/webhook-endpoints'],
      ['GET', `/v1/webhook-endpoints/${id}`],
      ['PATCH', `/v1/webhook-endpoints/${id}`],
      ['DELETE', `/v1/webhook-endpoints/${id}`],
      ['POST', `/v1/webhook-endpoints/${id}/rotate-secret`],
    ] as const) {
      const response = await t.call(
        method,
        url,
        undefined,
        method === 'POST' || method === 'PATCH' ? { url: receiver.url } : undefined,
      );
      assert.equal(response.statusCode, 401, `${method} ${url}`);
      assert.equal(response.json().error.code, 'UNAUTHORIZED');
    }
    const bad = async (method: 'POST' | 'PATCH', url: string, body: unknown) => {
      const response = await t.call(method, url, merchant.sandbox, body);
      assert.equal(response.statusCode, 400, `${JSON.stringify(body)}: ${response.body}`);
      assert.equal(response.json().error.code, 'VALIDATION_ERROR');
    };
    await bad('POST', '/v1/webhook-endpoints', {});
    await bad('POST', '/v1/webhook-endpoints', { url: 'ftp://example.com/x' });
    await bad('POST', '/v1/webhook-endpoints', { url: receiver.url, enabled_events: [] });
    await bad('POST', '/v1/webhook-endpoints', { url: receiver.url, enabled_events: ['Payment Completed'] });
    await bad('POST', '/v1/webhook-endpoints', { url: receiver.url, secret: 'whsec_mine' });
    await bad('PATCH', `/v1/webhook-endpoints/${id}`, {});
    await bad('PATCH', `/v1/webhook-endpoints/${id}`, { disabled: 'yes' });
    await bad('POST', `/v1/webhook-endpoints/${id}/rotate-secret`, { grace_period_seconds: -1 });
    await bad('POST', `/v1/webhook-endpoints/${id}/rotate-secret`, { grace_period_seconds: 8 * 24 * 3600 });
    assert.equal((await t.call('GET', '/v1/webhook-endpoints/not-a-uuid', merchant.sandbox)).statusCode, 400);
    for (const [method, url] of [
      ['GET', `/v1/webhook-endpoints/${UNKNOWN_ID}`],
      ['PATCH', `/v1/webhook-endpoints/${UNKNOWN_ID}`],
      ['DELETE', `/v1/webhook-endpoints/${UNKNOWN_ID}`],
      ['POST', `/v1/webhook-endpoints/${UNKNOWN_ID}/rotate-secret`],
    ] as const) {
      const response = await t.call(method, url, merchant.sandbox, method === 'PATCH' ? { disabled: true } : undefined);
      assert.equal(response.statusCode, 404, `${method} ${url}`);
      assert.equal(response.json().error.code, 'NOT_FOUND');
    }
  });

  it('another merchant and another mode get 404 and change nothing', async () => {
    const live = (
      await t.call('POST', '/v1/webhook-endpoints', merchant.live, { url: 'https://93.184.215.14/hooks' })
    ).json().data;
    assert.equal(live.mode, 'live');
    for (const key of [other.live, other.sandbox, merchant.sandbox, merchant.test]) {
      assert.equal((await t.call('GET', `/v1/webhook-endpoints/${live.id}`, key)).statusCode, 404);
      assert.equal(
        (await t.call('PATCH', `/v1/webhook-endpoints/${live.id}`, key, { url: 'https://93.184.215.15/x' })).statusCode,
        404,
      );
      assert.equal((await t.call('POST', `/v1/webhook-endpoints/${live.id}/rotate-secret`, key)).statusCode, 404);
      assert.equal((await t.call('DELETE', `/v1/webhook-endpoints/${live.id}`, key)).statusCode, 404);
      assert.ok(
        !(await t.call('GET', '/v1/webhook-endpoints', key)).json().data.some((row: any) => row.id === live.id),
      );
    }
    const still = (await t.call('GET', `/v1/webhook-endpoints/${live.id}`, merchant.live)).json().data;
    assert.equal(still.url, 'https://93.184.215.14/hooks');
    assert.equal(still.previous_secret_expires_at, null, 'not rotated');
    // The shortcut is per mode too: a sandbox key neither reads nor rotates the live default endpoint.
    await t.call('PUT', '/v1/webhook-endpoint', merchant.live, { url: 'https://93.184.215.14/default' });
    assert.deepEqual((await t.call('GET', '/v1/webhook-endpoint', merchant.sandbox)).json().data, {
      url: null,
      secret_set: false,
    });
    const sandbox_rotate = await t.call('POST', '/v1/webhook-endpoint/rotate-secret', merchant.sandbox);
    assert.equal(sandbox_rotate.statusCode, 409);
    assert.equal(sandbox_rotate.json().error.code, 'WEBHOOK_ENDPOINT_NOT_SET');
    const live_default = (await t.call('GET', '/v1/webhook-endpoints', merchant.live))
      .json()
      .data.find((row: any) => row.is_default);
    assert.equal(live_default.previous_secret_expires_at, null);
  });

  it(`allows ${MAX_ENDPOINTS_PER_MODE} endpoints per mode, even under concurrent creates (409 WEBHOOK_ENDPOINT_LIMIT)`, async () => {
    const responses = await Promise.all(
      Array.from({ length: MAX_ENDPOINTS_PER_MODE + 6 }, (_, i) =>
        t.call('POST', '/v1/webhook-endpoints', merchant.sandbox, { url: receiverAt(`/n${i}`) }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode);
    assert.equal(statuses.filter((status) => status === 201).length, MAX_ENDPOINTS_PER_MODE);
    const refused = responses.filter((response) => response.statusCode !== 201);
    assert.equal(refused.length, 6);
    for (const response of refused) {
      assert.equal(response.statusCode, 409);
      assert.equal(response.json().error.code, 'WEBHOOK_ENDPOINT_LIMIT');
    }
    assert.equal(
      (await t.call('GET', '/v1/webhook-endpoints', merchant.sandbox)).json().data.length,
      MAX_ENDPOINTS_PER_MODE,
    );
    // The other mode has its own allowance.
    assert.equal(
      (await t.call('POST', '/v1/webhook-endpoints', merchant.live, { url: 'https://93.184.215.14/live' })).statusCode,
      201,
    );
    const put = await t.call('PUT', '/v1/webhook-endpoint', merchant.sandbox, { url: receiver.url });
    assert.equal(put.json().error.code, 'WEBHOOK_ENDPOINT_LIMIT', 'the shortcut creates an endpoint too');
  });

  it('fans an event out to every enabled endpoint of its mode subscribed to its type, and never across modes', async () => {
    const all = (await t.call('POST', '/v1/webhook-endpoints', merchant.sandbox, { url: receiverAt('/all') })).json()
      .data;
    const completed_only = (
      await t.call('POST', '/v1/webhook-endpoints', merchant.sandbox, {
        url: receiverAt('/completed'),
        enabled_events: ['payment.completed'],
      })
    ).json().data;
    await t.call('POST', '/v1/webhook-endpoints', merchant.sandbox, { url: receiverAt('/disabled'), disabled: true });
    // Live endpoints of the same merchant on the same receiver: they must get no sandbox event.
    const live = (await t.call('POST', '/v1/webhook-endpoints', merchant.live, { url: receiverAt('/live') })).json()
      .data;

    const simulated = await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, {
      scenario: 'matched_then_completed',
    });
    assert.equal(simulated.statusCode, 201);
    assert.equal(await drain(), 3, 'matched -> /all; completed -> /all and /completed');
    const deliveries = (await t.call('GET', '/v1/webhook-deliveries?limit=100', merchant.sandbox))
      .json()
      .data.filter((row: any) => row.resource_id === simulated.json().data.payment.id);
    const by_endpoint = (id: string) =>
      deliveries
        .filter((row: any) => row.endpoint_id === id)
        .map((row: any) => row.event_type)
        .sort();
    assert.deepEqual(by_endpoint(all.id), ['payment.completed', 'payment.matched']);
    assert.deepEqual(by_endpoint(completed_only.id), ['payment.completed']);
    assert.equal(deliveries.length, 3);
    assert.ok(deliveries.every((row: any) => row.status === 'succeeded'));
    assert.deepEqual(
      (await t.call('GET', `/v1/webhook-deliveries?endpoint_id=${completed_only.id}`, merchant.sandbox))
        .json()
        .data.map((row: any) => row.event_type),
      ['payment.completed'],
    );
    assert.deepEqual(
      (await t.call('GET', `/v1/webhook-deliveries?endpoint_id=${live.id}`, merchant.live)).json().data,
      [],
    );
    assert.ok(receiver.received.every((hook) => hook.body['sandbox'] === true));
    assert.deepEqual(receiver.received.map((hook) => hook.path).sort(), ['/all', '/all', '/completed']);

    // A live event goes to the live endpoint only.
    receiver.received.length = 0;
    const trade = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: 'fan-live-1',
      amount: '100.00',
      currency: 'THB',
      return_url: 'https://shop.example/return',
    });
    assert.equal(trade.statusCode, 201, trade.body);
    await drain();
    assert.ok(receiver.received.length >= 1);
    assert.ok(receiver.received.every((hook) => hook.body['sandbox'] === undefined && hook.path === '/live'));
    const live_deliveries = (await t.call('GET', '/v1/webhook-deliveries?limit=100', merchant.live)).json().data;
    assert.ok(live_deliveries.length >= 1);
    assert.ok(live_deliveries.every((row: any) => row.endpoint_id === live.id));
    const sandbox_after = (await t.call('GET', '/v1/webhook-deliveries?limit=100', merchant.sandbox)).json().data;
    assert.ok(
      !sandbox_after.some((row: any) => row.resource_id === trade.json().data.id),
      'a sandbox key sees no live delivery',
    );
  });

  it('rotation overlaps: both secrets sign (v1,<new> v1,<old>) for the grace period, X-Service-Signature uses the new one', async () => {
    const created = (await t.call('POST', '/v1/webhook-endpoints', merchant.sandbox, { url: receiver.url })).json()
      .data;
    const rotated = await t.call('POST', `/v1/webhook-endpoints/${created.id}/rotate-secret`, merchant.sandbox, {
      grace_period_seconds: 3600,
    });
    const fresh = rotated.json().data.secret;
    await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, { scenario: 'expired' });
    await drain();
    const [hook] = receiver.received;
    const signatures = String(hook!.headers['webhook-signature']).split(' ');
    assert.equal(signatures.length, 2);
    const now = t.clock.now();
    verifyStandardSignature(hook!.raw, hook!.headers, fresh, { now });
    verifyStandardSignature(hook!.raw, hook!.headers, created.secret, { now });
    verifyServiceSignature(hook!.raw, String(hook!.headers['x-service-signature']), fresh);
    assert.throws(() =>
      verifyServiceSignature(hook!.raw, String(hook!.headers['x-service-signature']), created.secret),
    );

    // After the grace period only the new secret signs.
    t.clock.advance(3600_000 + 1);
    assert.equal(
      (await t.call('GET', `/v1/webhook-endpoints/${created.id}`, merchant.sandbox)).json().data
        .previous_secret_expires_at,
      null,
    );
    receiver.received.length = 0;
    await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, { scenario: 'expired' });
    await drain();
    const [later] = receiver.received;
    assert.equal(String(later!.headers['webhook-signature']).split(' ').length, 1);
    assert.throws(() => verifyStandardSignature(later!.raw, later!.headers, created.secret, { now: t.clock.now() }));
    verifyStandardSignature(later!.raw, later!.headers, fresh, { now: t.clock.now() });
  });

  it('deleting an endpoint skips its pending deliveries; recover and redeliver work per endpoint', async () => {
    const a = (await t.call('POST', '/v1/webhook-endpoints', merchant.sandbox, { url: receiverAt('/a') })).json().data;
    const b = (await t.call('POST', '/v1/webhook-endpoints', merchant.sandbox, { url: receiverAt('/b') })).json().data;
    const since = t.clock.now().toISOString();
    receiver.answer = () => 500;
    await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, { scenario: 'expired' });
    await drain();
    assert.equal(receiver.received.length, 2);
    await t.call('DELETE', `/v1/webhook-endpoints/${a.id}`, merchant.sandbox);
    const of = async (id: string) =>
      (await t.call('GET', `/v1/webhook-deliveries?endpoint_id=${id}`, merchant.sandbox)).json().data[0];
    const skipped = await of(a.id);
    assert.equal(skipped.status, 'skipped');
    const redo_deleted = await t.call('POST', `/v1/webhook-deliveries/${skipped.id}/redeliver`, merchant.sandbox);
    assert.equal(redo_deleted.statusCode, 409);
    assert.equal(redo_deleted.json().error.code, 'WEBHOOK_ENDPOINT_NOT_SET');
    assert.equal(
      (await t.call('POST', '/v1/webhook-deliveries/recover', merchant.sandbox, { since, endpoint_id: a.id }))
        .statusCode,
      404,
      'a deleted endpoint',
    );
    assert.equal(
      (await t.call('POST', '/v1/webhook-deliveries/recover', other.sandbox, { since, endpoint_id: b.id })).statusCode,
      404,
      "another merchant's endpoint",
    );
    assert.equal(
      (await t.call('POST', '/v1/webhook-deliveries/recover', merchant.live, { since, endpoint_id: b.id })).statusCode,
      404,
      "another mode's endpoint",
    );

    // b's delivery fails for good; recover for b re-queues it alone.
    for (let attempt = 0; attempt < 10; attempt++) {
      t.clock.advance(86_400_000);
      await drain();
    }
    assert.equal((await of(b.id)).status, 'failed');
    receiver.answer = () => 200;
    receiver.received.length = 0;
    const recovered = await t.call('POST', '/v1/webhook-deliveries/recover', merchant.sandbox, {
      since,
      endpoint_id: b.id,
    });
    assert.equal(recovered.statusCode, 200, recovered.body);
    assert.equal(recovered.json().data.requeued, 1);
    assert.equal(await drain(), 1);
    assert.equal((await of(b.id)).status, 'succeeded');
    assert.equal((await of(a.id)).status, 'skipped', "the deleted endpoint's delivery stays skipped");
  });

  it('the service API the dashboard calls: a live merchant JWT/session scope manages live endpoints', async () => {
    const scope = { merchant_id: merchant.id, is_sandbox: false };
    const created = await createEndpoint(t.application.webhooks.deps, scope, {
      url: 'https://93.184.215.14/dash',
      enabled_events: ['payment.completed'],
    });
    assert.equal(created.mode, 'live');
    assert.ok(
      (await t.call('GET', '/v1/webhook-endpoints', merchant.live))
        .json()
        .data.some((row: any) => row.id === created.id),
    );
    assert.ok(
      !(await listEndpoints(t.application.webhooks.deps, { merchant_id: merchant.id, is_sandbox: true })).some(
        (row) => row.id === created.id,
      ),
    );
  });

  it('POST /admin/merchants {webhook_url} creates the live default endpoint with the issued secret', async () => {
    const response = await t.admin('POST', '/admin/merchants', { name: 'With URL', webhook_url: receiverAt('/admin') });
    assert.equal(response.statusCode, 201, response.body);
    const { api_keys, webhook_secret, merchant: created } = response.json().data;
    assert.equal(created.webhook_url, receiverAt('/admin'));
    const [endpoint] = (await t.call('GET', '/v1/webhook-endpoints', api_keys.live)).json().data;
    assert.equal(endpoint.url, receiverAt('/admin'));
    assert.equal(endpoint.is_default, true);
    assert.equal(endpoint.mode, 'live');
    assert.deepEqual((await t.call('GET', '/v1/webhook-endpoints', api_keys.sandbox)).json().data, []);
    // The shortcut returns the same secret, and a live event is signed with it.
    assert.equal(
      (await t.call('PUT', '/v1/webhook-endpoint', api_keys.live, { url: receiverAt('/admin') })).json().data.secret,
      webhook_secret,
    );
    const trade = await t.call('POST', '/v1/trades', api_keys.live, {
      order_id: 'admin-1',
      amount: '10.00',
      currency: 'THB',
      return_url: 'https://shop.example/r',
    });
    assert.equal(trade.statusCode, 201, trade.body);
    await drain();
    const hook = receiver.received.find((received) => received.path === '/admin')!;
    verifyServiceSignature(hook.raw, String(hook.headers['x-service-signature']), webhook_secret);
  });

  it('never follows a redirect: a 3xx is a failed attempt', async () => {
    await t.call('POST', '/v1/webhook-endpoints', merchant.sandbox, { url: receiverAt('/moved') });
    receiver.answer = () => 302;
    await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, { scenario: 'expired' });
    await drain();
    assert.equal(receiver.received.length, 1, 'one request, not followed');
    const [delivery] = (await t.call('GET', '/v1/webhook-deliveries?limit=1', merchant.sandbox)).json().data;
    assert.equal(delivery.status, 'pending');
    assert.equal(delivery.attempts[0].status_code, 302);
    assert.equal(delivery.attempts[0].succeeded, false);
  });

  it('a disabled endpoint keeps its queued deliveries waiting and sends them once enabled again', async () => {
    const endpoint = (
      await t.call('POST', '/v1/webhook-endpoints', merchant.sandbox, { url: receiverAt('/paused') })
    ).json().data;
    await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, { scenario: 'expired' });
    await t.call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, merchant.sandbox, { disabled: true });
    assert.equal(await drain(), 0, 'nothing sent while disabled');
    await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, { scenario: 'expired' });
    const queued = (await t.call('GET', `/v1/webhook-deliveries?endpoint_id=${endpoint.id}`, merchant.sandbox)).json()
      .data;
    assert.deepEqual(
      queued.map((row: any) => row.status),
      ['pending'],
      'the event written while disabled is not queued for it',
    );
    await t.call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, merchant.sandbox, { disabled: false });
    assert.equal(await drain(), 1);
    assert.deepEqual(
      receiver.received.map((hook) => hook.path),
      ['/paused'],
    );
  });

  it('one INSERT of several events fans each out to its own subscribed endpoints, or to one skipped delivery', async () => {
    const endpoint = async (path: string, enabled_events: string[]) =>
      (
        await t.call('POST', '/v1/webhook-endpoints', merchant.sandbox, { url: receiverAt(path), enabled_events })
      ).json().data.id as string;
    const [matched, every, partly] = [
      await endpoint('/matched', ['buy_order.matched']),
      await endpoint('/every', ['*']),
      await endpoint('/partly', ['buy_order.partially_filled']),
    ];
    const now = t.clock.now();
    const order = (is_sandbox: boolean): BuyOrderRow => ({
      id: randomUUID(),
      merchant_id: merchant.id,
      is_sandbox,
      status: 'matched',
      amount_micro_pay: 1_000_000,
      fiat_currency: 'THB',
      fiat_amount: 3500,
      filled_micro_pay: 1_000_000,
      filled_fiat_amount: 3500,
      expires_at: now,
      matched_sell_order_id: randomUUID(),
      mint_transfer_id: randomUUID(),
      created_at: now,
      matched_at: now,
      cancelled_at: null,
      expired_at: null,
    });
    const orders = [order(true), order(true), order(true), order(false)];
    // the matcher's way: a batch's events in one statement
    await t.db.transaction().execute((trx) =>
      emitBuyOrderEvents(trx, now, [
        { order: orders[0]!, type: 'buy_order.matched' },
        { order: orders[1]!, type: 'buy_order.partially_filled' },
        { order: orders[2]!, type: 'buy_order.cancelled' },
        // live mode: the merchant has no live endpoint
        { order: orders[3]!, type: 'buy_order.matched' },
      ]),
    );
    const deliveries = await t.db
      .selectFrom('webhook_deliveries')
      .select(['resource_id', 'endpoint_id', 'status'])
      .where(
        'resource_id',
        'in',
        orders.map((row) => row.id),
      )
      .execute();
    const of = (index: number) =>
      deliveries
        .filter((delivery) => delivery.resource_id === orders[index]!.id)
        .map((delivery) => `${delivery.status}:${delivery.endpoint_id ?? 'none'}`)
        .sort();
    assert.deepEqual(of(0), [`pending:${matched}`, `pending:${every}`].sort());
    assert.deepEqual(of(1), [`pending:${every}`, `pending:${partly}`].sort());
    assert.deepEqual(of(2), [`pending:${every}`]);
    assert.deepEqual(of(3), ['skipped:none']);
  });
});
