import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sha256Hex } from '../../src/lib/crypto.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { drainVerdicts, uploadProof } from '../helpers/payments.ts';
import { newSlip } from '../helpers/slips.ts';

/**
 * DESIGN 3b: sellers have a key of their own (`sel_live_…`, shown once, stored as SHA-256, rolled by an operator); with
 * it a seller lists the legs waiting for it, reads their slips and confirms or rejects them; merchant and seller
 * credentials never cross.
 */
describe('seller keys and the seller legs routes', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let order = 0;
  const sellers: { id: string; seller_key: string }[] = [];

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Seller legs');
    for (const phone of ['0811111111', '0822222222'])
      sellers.push((await t.createSeller(thbSeller(100_000, '35.00', phone))) as { id: string; seller_key: string });
  });
  after(() => t.close());

  /** A live payment on seller `n`'s offer (the other seller is switched off for it), its slip judged by slip_qr. */
  async function waitingLeg(n: 0 | 1, reference?: string) {
    await t.db
      .updateTable('sellers')
      .set({ active: false })
      .where('id', '=', sellers[1 - n]!.id)
      .execute();
    await t.db.updateTable('sellers').set({ active: true }).where('id', '=', sellers[n]!.id).execute();
    const created = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: `sl-${++order}`,
      amount: 10_000,
      currency: 'THB',
      return_url: 'https://shop.example/r',
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().data.id as string;
    const [slip] = await uploadProof(t, merchant.live, id, [newSlip(reference ? { reference } : {})]);
    await drainVerdicts(t);
    return { id, slip: slip! };
  }
  const as = (key: string) => ({ 'x-api-key': key });

  it('POST /admin/sellers returns a sel_live_ key once, kept only as its SHA-256', async () => {
    const key = sellers[0]!.seller_key;
    assert.match(key, /^sel_live_[0-9A-Za-z]{32,}$/);
    const row = await t.db
      .selectFrom('sellers')
      .select(['key_hash', 'key_hint'])
      .where('id', '=', sellers[0]!.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.key_hash, sha256Hex(key));
    assert.ok(!JSON.stringify(row).includes(key.slice(12)), 'the key itself is not stored');
  });

  it('a seller lists its legs waiting for it (page envelope), fetches the slip, and confirms: the payment completes', async () => {
    const { id, slip } = await waitingLeg(0);
    const listed = await t.request({
      method: 'GET',
      url: '/v1/seller/legs?status=awaiting_payee',
      headers: as(sellers[0]!.seller_key),
    });
    assert.equal(listed.statusCode, 200, listed.body);
    const page = listed.json();
    assert.deepEqual([page.has_more, page.next_cursor], [false, null]);
    const leg = page.data.find((candidate: { payment_id: string }) => candidate.payment_id === id);
    assert.deepEqual(
      [leg.match_order, leg.amount_minor, leg.currency, leg.reference, leg.status],
      [1, 10_000, 'THB', slip.reference, 'awaiting_payee'],
    );
    assert.ok(leg.amount_micro_pay > 0);
    const image = await t.request({
      method: 'GET',
      url: new URL(leg.image_url).pathname,
      headers: as(sellers[0]!.seller_key),
    });
    assert.equal(image.statusCode, 200);
    assert.deepEqual(image.rawPayload, slip.bytes);
    const other = await t.request({
      method: 'GET',
      url: '/v1/seller/legs?status=awaiting_payee',
      headers: { authorization: `Bearer ${sellers[1]!.seller_key}` },
    });
    assert.equal(other.statusCode, 200);
    assert.ok(!other.json().data.some((candidate: { payment_id: string }) => candidate.payment_id === id));
    const confirmed = await t.request({
      method: 'POST',
      url: `/v1/seller/legs/${id}/1/confirm`,
      headers: as(sellers[0]!.seller_key),
    });
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    assert.deepEqual([confirmed.json().data.status, confirmed.json().data.decided_by], ['verified', 'seller']);
    assert.equal((await t.call('GET', `/v1/payments/${id}`, merchant.live)).json().data.status, 'completed');
    const again = await t.request({
      method: 'POST',
      url: `/v1/seller/legs/${id}/1/confirm`,
      headers: as(sellers[0]!.seller_key),
    });
    assert.deepEqual([again.statusCode, again.json().error.code], [409, 'LEG_NOT_AWAITING_PAYEE']);
  });

  it("another seller's leg is 404 on every seller route; a rejection fails the payment with its reason", async () => {
    const { id } = await waitingLeg(1);
    for (const [method, url] of [
      ['POST', `/v1/seller/legs/${id}/1/confirm`],
      ['POST', `/v1/seller/legs/${id}/1/reject`],
      ['GET', `/v1/seller/legs/${id}/1/slip`],
    ] as const) {
      const response = await t.request({
        method,
        url,
        headers: as(sellers[0]!.seller_key),
        ...(url.endsWith('reject') ? { payload: { reason: 'not mine' } } : {}),
      });
      assert.deepEqual([response.statusCode, response.json().error.code], [404, 'NOT_FOUND'], `${method} ${url}`);
    }
    const bad = await t.request({
      method: 'POST',
      url: `/v1/seller/legs/${id}/1/reject`,
      headers: as(sellers[1]!.seller_key),
      payload: {},
    });
    assert.deepEqual([bad.statusCode, bad.json().error.code], [400, 'VALIDATION_ERROR']);
    const rejected = await t.request({
      method: 'POST',
      url: `/v1/seller/legs/${id}/1/reject`,
      headers: as(sellers[1]!.seller_key),
      payload: { reason: 'nothing arrived' },
    });
    assert.equal(rejected.statusCode, 200, rejected.body);
    assert.deepEqual([rejected.json().data.status, rejected.json().data.reason], ['rejected', 'nothing arrived']);
    const failed = (await t.call('GET', `/v1/payments/${id}`, merchant.live)).json().data;
    assert.deepEqual([failed.status, failed.failure_reason], ['failed', 'receipt_payee_rejected']);
  });

  it('credentials never cross: 401 without a seller key, 403 for a merchant key on seller routes and a seller key on merchant routes', async () => {
    const none = await t.request({ method: 'GET', url: '/v1/seller/legs' });
    assert.deepEqual([none.statusCode, none.json().error.code], [401, 'UNAUTHORIZED']);
    const wrong = await t.request({ method: 'GET', url: '/v1/seller/legs', headers: as(`sel_live_${'x'.repeat(40)}`) });
    assert.deepEqual([wrong.statusCode, wrong.json().error.code], [401, 'UNAUTHORIZED']);
    const merchant_key = await t.request({ method: 'GET', url: '/v1/seller/legs', headers: as(merchant.live) });
    assert.deepEqual([merchant_key.statusCode, merchant_key.json().error.code], [403, 'FORBIDDEN']);
    const seller_key = await t.request({ method: 'GET', url: '/v1/payments', headers: as(sellers[0]!.seller_key) });
    assert.deepEqual([seller_key.statusCode, seller_key.json().error.code], [403, 'FORBIDDEN']);
  });

  it('POST /admin/sellers/{id}/keys rolls the key: the new one works, the old one is 401; unknown seller 404', async () => {
    const rolled = await t.admin('POST', `/admin/sellers/${sellers[0]!.id}/keys`);
    assert.equal(rolled.statusCode, 201, rolled.body);
    const fresh = rolled.json().data.seller_key as string;
    assert.match(fresh, /^sel_live_[0-9A-Za-z]{32,}$/);
    const old = await t.request({ method: 'GET', url: '/v1/seller/legs', headers: as(sellers[0]!.seller_key) });
    assert.equal(old.statusCode, 401);
    const works = await t.request({ method: 'GET', url: '/v1/seller/legs', headers: as(fresh) });
    assert.equal(works.statusCode, 200);
    sellers[0]!.seller_key = fresh;
    const unknown = await t.admin('POST', '/admin/sellers/00000000-0000-4000-8000-000000000000/keys');
    assert.deepEqual([unknown.statusCode, unknown.json().error.code], [404, 'NOT_FOUND']);
  });
});
