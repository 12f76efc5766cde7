import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyServiceSignature, verifyStandardSignature } from '../../clients/typescript/src/webhooks.js';
import { dispatchDueWebhooks } from '../../src/modules/webhooks/dispatcher.ts';
import { MAX_ENDPOINTS_PER_MODE } from '../../src/modules/webhooks/endpoints.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { drainVerdicts, uploadProof } from '../helpers/payments.ts';
import { startReceiver, type Receiver } from './receiver.ts';

/**
 * DESIGN 3b: `leg.awaiting_payee` goes to the seller's own webhook endpoints, managed with its seller key and signed
 * like a merchant's; another seller's endpoint gets nothing, and the merchant never sees the seller's deliveries.
 */
describe("sellers' webhook endpoints (/v1/seller/webhook-endpoints)", () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let receiver: Receiver;
  let order = 0;
  const sellers: { id: string; seller_key: string }[] = [];
  const as = (key: string) => ({ 'x-api-key': key });
  const receiverAt = (path: string) => receiver.url.replace(/\/hooks$/, path);
  const drain = async () => {
    let total = 0;
    for (let handled = -1; handled !== 0; total += handled)
      handled = await dispatchDueWebhooks({ ...t.application.webhooks.dispatch, timeout_ms: 2000 });
    return total;
  };
  const sellerCall = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, key: string, payload?: object) =>
    t.request({ method, url, headers: as(key), ...(payload ? { payload } : {}) });

  before(async () => {
    t = await startTestApp();
    receiver = await startReceiver();
    merchant = await t.createMerchant('Seller hooks');
    for (const phone of ['0811111111', '0822222222'])
      sellers.push((await t.createSeller(thbSeller(100_000, '35.00', phone))) as { id: string; seller_key: string });
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  /** A live payment on seller `n`'s offer whose slip passed slip_qr: its leg waits for that seller. */
  async function waitingLeg(n: 0 | 1): Promise<string> {
    await t.db
      .updateTable('sellers')
      .set({ active: false })
      .where('id', '=', sellers[1 - n]!.id)
      .execute();
    await t.db.updateTable('sellers').set({ active: true }).where('id', '=', sellers[n]!.id).execute();
    const created = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: `sh-${++order}`,
      amount: 10_000,
      currency: 'THB',
      return_url: 'https://shop.example/r',
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().data.id as string;
    await uploadProof(t, merchant.live, id);
    await drainVerdicts(t);
    return id;
  }

  it("a real receiver gets the seller's leg.awaiting_payee, correctly signed with the seller's secret; the other seller's endpoint gets nothing; the merchant sees none of it", async () => {
    const created = await sellerCall('POST', '/v1/seller/webhook-endpoints', sellers[0]!.seller_key, {
      url: receiverAt('/seller-0'),
    });
    assert.equal(created.statusCode, 201, created.body);
    const endpoint = created.json().data;
    assert.match(endpoint.secret, /^whsec_/);
    assert.deepEqual([endpoint.mode, endpoint.enabled_events, endpoint.disabled], ['live', ['*'], false]);
    const other = await sellerCall('POST', '/v1/seller/webhook-endpoints', sellers[1]!.seller_key, {
      url: receiverAt('/seller-1'),
    });
    assert.equal(other.statusCode, 201, other.body);
    const listed = await sellerCall('GET', '/v1/seller/webhook-endpoints', sellers[0]!.seller_key);
    assert.deepEqual(
      listed.json().data.map((row: { id: string; secret?: string }) => [row.id, row.secret]),
      [[endpoint.id, undefined]],
      'the list shows only its own endpoint, never its secret',
    );

    const id = await waitingLeg(0);
    await drain();
    const hooks = receiver.received.filter((hook) => hook.body.type === 'leg.awaiting_payee');
    assert.deepEqual(
      hooks.map((hook) => hook.path),
      ['/seller-0'],
    );
    const [hook] = hooks;
    assert.deepEqual(
      [hook!.body.data.payment_id, hook!.body.data.match_order, hook!.body.data.seller_id, hook!.body.data.status],
      [id, 1, sellers[0]!.id, 'awaiting_payee'],
    );
    verifyStandardSignature(hook!.raw, hook!.headers, endpoint.secret, { now: t.clock.now() });
    verifyServiceSignature(hook!.raw, String(hook!.headers['x-service-signature']), endpoint.secret);
    assert.throws(() =>
      verifyStandardSignature(hook!.raw, hook!.headers, other.json().data.secret, { now: t.clock.now() }),
    );

    const deliveries = await t.db
      .selectFrom('webhook_deliveries')
      .select(['endpoint_id', 'seller_id', 'status', 'attempt_count'])
      .where('resource_id', '=', id)
      .where('seller_id', 'is not', null)
      .execute();
    assert.deepEqual(deliveries, [
      { endpoint_id: endpoint.id, seller_id: sellers[0]!.id, status: 'succeeded', attempt_count: 1 },
    ]);
    const merchant_view = await t.call('GET', '/v1/webhook-deliveries?limit=100', merchant.live);
    assert.equal(merchant_view.statusCode, 200, merchant_view.body);
    assert.ok(
      !merchant_view.json().data.some((row: { endpoint_id: string | null }) => row.endpoint_id === endpoint.id),
      "the seller's delivery is not the merchant's",
    );
    const by_merchant = await t.call('GET', `/v1/webhook-endpoints/${endpoint.id}`, merchant.live);
    assert.equal(by_merchant.statusCode, 404);
  });

  it("another seller's endpoint is 404; a merchant key is 403; a disabled endpoint gets no new event; a deleted one is gone", async () => {
    const [mine] = (await sellerCall('GET', '/v1/seller/webhook-endpoints', sellers[0]!.seller_key)).json().data;
    for (const [method, payload] of [
      ['PATCH', { disabled: true }],
      ['DELETE', undefined],
    ] as const) {
      const answer = await sellerCall(
        method,
        `/v1/seller/webhook-endpoints/${mine.id}`,
        sellers[1]!.seller_key,
        payload,
      );
      assert.deepEqual([answer.statusCode, answer.json().error.code], [404, 'NOT_FOUND'], `${method}`);
    }
    const merchant_key = await sellerCall('GET', '/v1/seller/webhook-endpoints', merchant.live);
    assert.equal(merchant_key.statusCode, 403);

    const disabled = await sellerCall('PATCH', `/v1/seller/webhook-endpoints/${mine.id}`, sellers[0]!.seller_key, {
      disabled: true,
    });
    assert.deepEqual([disabled.statusCode, disabled.json().data.disabled], [200, true]);
    const before_count = receiver.received.filter((hook) => hook.path === '/seller-0').length;
    await waitingLeg(0);
    await drain();
    assert.equal(receiver.received.filter((hook) => hook.path === '/seller-0').length, before_count);

    const deleted = await sellerCall('DELETE', `/v1/seller/webhook-endpoints/${mine.id}`, sellers[0]!.seller_key);
    assert.deepEqual(deleted.json().data, { id: mine.id, deleted: true });
    assert.deepEqual((await sellerCall('GET', '/v1/seller/webhook-endpoints', sellers[0]!.seller_key)).json().data, []);
  });

  it(`allows a seller ${MAX_ENDPOINTS_PER_MODE} endpoints, even under concurrent creates (409 WEBHOOK_ENDPOINT_LIMIT)`, async () => {
    const seller = (await t.createSeller(thbSeller(1_000, '35.00', '0833333333'))) as {
      id: string;
      seller_key: string;
    };
    const responses = await Promise.all(
      Array.from({ length: MAX_ENDPOINTS_PER_MODE + 6 }, (_, i) =>
        sellerCall('POST', '/v1/seller/webhook-endpoints', seller.seller_key, { url: receiverAt(`/limit-${i}`) }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode);
    assert.equal(statuses.filter((status) => status === 201).length, MAX_ENDPOINTS_PER_MODE);
    for (const response of responses.filter((answer) => answer.statusCode !== 201))
      assert.deepEqual([response.statusCode, response.json().error.code], [409, 'WEBHOOK_ENDPOINT_LIMIT']);
    const listed = (await sellerCall('GET', '/v1/seller/webhook-endpoints', seller.seller_key)).json().data;
    assert.equal(listed.length, MAX_ENDPOINTS_PER_MODE);
  });
});
