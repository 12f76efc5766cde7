import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_HEADERS, startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { switchableLedger } from '../helpers/orders.ts';
import { drainVerdicts, uploadProof } from '../helpers/payments.ts';

/**
 * A leg waiting for its payee, confirmed while the ledger is unreachable (found by the whole-flow simulation): the
 * seller's and the operator's confirm answer the documented 502 LEDGER_UNAVAILABLE, the leg keeps waiting, and the
 * same confirm completes the payment once the ledger is back.
 */
describe('seller legs: a confirm while the ledger is unreachable', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let seller: { id: string; seller_key: string };
  const ledger = switchableLedger();

  before(async () => {
    t = await startTestApp({ overrides: { ledger } });
    ledger.attach(t);
    merchant = await t.createMerchant('Outage legs');
    seller = (await t.createSeller(thbSeller(100_000, '35.00', '0811111111'))) as { id: string; seller_key: string };
  });
  after(() => t.close());

  it('answers 502 LEDGER_UNAVAILABLE to the seller and the operator, keeps the leg waiting, then completes', async () => {
    const created = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: 'outage-leg-1',
      amount: 10_000,
      currency: 'THB',
      return_url: 'https://shop.example/r',
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().data.id as string;
    await uploadProof(t, merchant.live, id);
    await drainVerdicts(t);
    const confirm = () =>
      t.request({
        method: 'POST',
        url: `/v1/seller/legs/${id}/1/confirm`,
        headers: { 'x-api-key': seller.seller_key },
      });

    ledger.down_for.add('transfer');
    const by_seller = await confirm();
    const by_operator = await t.request({
      method: 'POST',
      url: `/admin/payments/${id}/legs/1/confirm`,
      headers: ADMIN_HEADERS,
    });
    ledger.down_for.clear();
    for (const refused of [by_seller, by_operator]) {
      assert.equal(refused.statusCode, 502, refused.body);
      assert.equal(refused.json().error.code, 'LEDGER_UNAVAILABLE');
    }
    const waiting = (await t.call('GET', `/v1/payments/${id}`, merchant.live)).json().data;
    assert.deepEqual(
      [waiting.status, waiting.match_details.map((leg: { proof: { status: string } }) => leg.proof.status)],
      ['confirming', ['awaiting_payee']],
    );

    const confirmed = await confirm();
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    assert.equal((await t.call('GET', `/v1/payments/${id}`, merchant.live)).json().data.status, 'completed');
  });
});
