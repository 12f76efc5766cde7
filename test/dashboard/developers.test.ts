import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dispatchDueWebhooks } from '../../src/modules/webhooks/dispatcher.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';
import { addUser, signIn, type Browser } from './helpers.ts';

/** The Developers page's tools: request log per key, confirmed key rolls, test events, disable and delete, attempts. */
describe('dashboard developers tools', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let owner: Browser;
  let receiver: Receiver;

  before(async () => {
    t = await startTestApp();
    receiver = await startReceiver();
    merchant = await t.createMerchant('Developer Shop');
    await addUser(t, merchant.id, 'owner@dev-tools.example', 'owner');
    owner = await signIn(t, 'owner@dev-tools.example');
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  const dispatchAll = async () => {
    for (
      let handled = await dispatchDueWebhooks({ ...t.application.webhooks.dispatch, timeout_ms: 2000 });
      handled > 0;
      handled = await dispatchDueWebhooks({ ...t.application.webhooks.dispatch, timeout_ms: 2000 })
    );
  };
  const endpointRows = () =>
    t.db
      .selectFrom('webhook_endpoints')
      .select(['id', 'url', 'disabled', 'deleted_at'])
      .where('merchant_id', '=', merchant.id)
      .where('is_sandbox', '=', false)
      .orderBy('url')
      .execute();

  it("lists each key's recent API calls: method, path, status, duration and request id; merchant JWT calls are not key calls", async () => {
    const listed = await t.call('GET', '/v1/payments?limit=2', merchant.live);
    assert.equal(listed.statusCode, 200);
    const missing = await t.call('GET', '/v1/payments/00000000-0000-4000-8000-000000000000', merchant.live);
    assert.equal(missing.statusCode, 404);
    await t.request({
      method: 'GET',
      url: '/v1/merchant-sell-orders',
      headers: { authorization: `Bearer ${merchant.jwt}` },
    });
    const page = await owner.get('/dashboard/developers');
    assert.equal(page.statusCode, 200);
    const log = /<section class="card" id="request-log">([\s\S]*?)<\/section>/.exec(page.body)?.[1] ?? '';
    assert.match(
      log,
      /GET<\/td><td class="mono" data-label="[^"]+">\/v1\/payments<\/td><td class="num" data-label="[^"]+">200</,
    );
    assert.match(log, />404</);
    assert.ok(log.includes(String(missing.headers['x-request-id'])), 'the request id is shown');
    assert.doesNotMatch(log, /merchant-sell-orders/);
    const rows = await t.db
      .selectFrom('api_request_log')
      .select(['method', 'path', 'status', 'duration_ms'])
      .where('merchant_id', '=', merchant.id)
      .execute();
    assert.equal(rows.length, 2);
    assert.ok(rows.every((row) => row.duration_ms >= 0));
  });

  it('the request log keeps a few days: older calls are not shown', async () => {
    await t.db
      .updateTable('api_request_log')
      .set({ created_at: new Date(t.clock.now().getTime() - 4 * 24 * 3600 * 1000) })
      .where('merchant_id', '=', merchant.id)
      .where('status', '=', 404)
      .execute();
    await t.call('GET', '/v1/payments?limit=1', merchant.live);
    const page = await owner.get('/dashboard/developers');
    assert.doesNotMatch(
      /id="request-log">([\s\S]*?)<\/section>/.exec(page.body)?.[1] ?? '',
      />404</,
      'older than the log keeps is not shown',
    );
  });

  it('rolling a key needs the confirmation box; without it the key is unchanged and the page says why', async () => {
    const key = await t.db
      .selectFrom('api_keys')
      .select(['id', 'revoked_at'])
      .where('merchant_id', '=', merchant.id)
      .where('kind', '=', 'live')
      .executeTakeFirstOrThrow();
    const refused = await owner.post(`/dashboard/api-keys/${key.id}/roll`, { grace_hours: '1' });
    assert.equal(refused.statusCode, 400);
    assert.match(refused.body, /id="error-message"/);
    assert.match(refused.body, /name="confirm" value="yes" required/);
    assert.equal(
      (await t.db.selectFrom('api_keys').select('revoked_at').where('id', '=', key.id).executeTakeFirstOrThrow())
        .revoked_at,
      null,
    );
  });

  it('a test event goes to the one endpoint chosen, signed, with its request and response shown per attempt', async () => {
    for (const path of ['/a', '/b'])
      assert.equal(
        (await owner.post('/dashboard/webhook-endpoints', { url: `${receiver.url}${path}`, enabled_events: '*' }))
          .statusCode,
        201,
      );
    const [first, second] = await endpointRows();
    receiver.answer = () => 200;
    const sent = await owner.post(`/dashboard/webhook-endpoints/${first!.id}/test`);
    assert.equal(sent.statusCode, 200, sent.body.slice(0, 300));
    assert.match(sent.body, /Test event evt_/);
    await dispatchAll();
    const received = receiver.received.filter((request) => request.body['type'] === 'webhook.test');
    assert.deepEqual(
      received.map((request) => request.path.split('/').pop()),
      ['a'],
      'only the chosen endpoint got it',
    );
    assert.ok(received[0]!.headers['webhook-signature'] ?? received[0]!.headers['x-webhook-signature'], 'signed');
    const other = await t.db
      .selectFrom('webhook_deliveries')
      .select('status')
      .where('endpoint_id', '=', second!.id)
      .execute();
    assert.ok(other.every((row) => row.status === 'skipped'));
    const page = await owner.get('/dashboard/developers');
    assert.match(page.body, /<details class="attempts">/);
    assert.match(page.body, /&quot;type&quot;: &quot;webhook.test&quot;/, 'the request body is shown');
  });

  it('disable stops test events and deliveries; enable brings them back; delete needs confirmation', async () => {
    const [first] = await endpointRows();
    assert.equal((await owner.post(`/dashboard/webhook-endpoints/${first!.id}/disable`)).statusCode, 200);
    assert.equal((await endpointRows())[0]!.disabled, true);
    const refused = await owner.post(`/dashboard/webhook-endpoints/${first!.id}/test`);
    assert.equal(refused.statusCode, 409);
    assert.match(refused.body, /id="error-message"/);
    assert.equal((await owner.post(`/dashboard/webhook-endpoints/${first!.id}/enable`)).statusCode, 200);
    assert.equal((await endpointRows())[0]!.disabled, false);
    assert.equal((await owner.post(`/dashboard/webhook-endpoints/${first!.id}/delete`)).statusCode, 400);
    assert.equal((await endpointRows())[0]!.deleted_at, null);
    const deleted = await owner.post(`/dashboard/webhook-endpoints/${first!.id}/delete`, { confirm: 'yes' });
    assert.equal(deleted.statusCode, 200);
    assert.notEqual((await endpointRows())[0]!.deleted_at, null);
    assert.doesNotMatch(deleted.body, new RegExp(`webhook-endpoints/${first!.id}/test`));
  });

  it('offers Redeliver on sent deliveries only, never on skipped ones', async () => {
    const page = await owner.get('/dashboard/developers');
    const rows = [
      ...page.body.matchAll(/<tr><td class="mono" title="([0-9a-f-]{36})" data-label="[^"]+">[\s\S]*?<\/tr>/g),
    ].map((match) => match[0]);
    const skipped = rows.filter((row) => row.includes('data-status="skipped"'));
    const sent = rows.filter((row) => row.includes('data-status="succeeded"'));
    assert.ok(
      skipped.length > 0 && sent.length > 0,
      `both kinds are listed (${skipped.length} skipped, ${sent.length} sent)`,
    );
    assert.ok(skipped.every((row) => !row.includes('class="secondary redeliver"')));
    assert.ok(sent.every((row) => row.includes('class="secondary redeliver"')));
  });

  it("shows the payout flow's instructions", async () => {
    const page = await owner.get('/dashboard/developers');
    assert.match(page.body, /id="payouts"/);
    assert.match(page.body, /docs\/payouts\.md/);
  });
});
