import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { drainVerdicts, uploadProof } from '../helpers/payments.ts';

/**
 * A live leg waiting for its seller never expires (DESIGN 3b), so `/metrics` tells the operator how many legs wait and
 * how long the oldest has: the signal to decide for a seller who never answers.
 */
describe('the gauges of legs waiting for their seller', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let seller: { id: string; seller_key: string };
  let order = 0;

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Waiting legs');
    seller = (await t.createSeller(thbSeller(100_000, '35.00', '0811111111'))) as { id: string; seller_key: string };
  });
  after(() => t.close());

  /** A live payment whose slip slip_qr passed: its one leg waits for the seller. */
  async function waitingLeg(): Promise<string> {
    const created = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: `wl-${++order}`,
      amount: 10_000,
      currency: 'THB',
      return_url: 'https://shop.example/r',
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().data.id as string;
    await uploadProof(t, merchant.live, id);
    await drainVerdicts(t);
    const proof = await t.db
      .selectFrom('payment_proofs')
      .select('verdict')
      .where('payment_id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(proof.verdict, 'awaiting_payee');
    return id;
  }

  async function gauges(): Promise<{ waiting: number; oldest_seconds: number }> {
    const response = await t.request({ method: 'GET', url: '/metrics' });
    assert.equal(response.statusCode, 200);
    const value = (name: string) => {
      const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(response.body);
      assert.ok(match, `${name} is not in /metrics`);
      return Number(match[1]);
    };
    return {
      waiting: value('mpay_payment_legs_awaiting_payee'),
      oldest_seconds: value('mpay_payment_legs_awaiting_payee_oldest_seconds'),
    };
  }

  it('count the live legs waiting and age the oldest by the clock, until the seller decides', async () => {
    assert.deepEqual(await gauges(), { waiting: 0, oldest_seconds: 0 });

    const first = await waitingLeg();
    t.clock.advance(2 * 3600_000);
    assert.deepEqual(await gauges(), { waiting: 1, oldest_seconds: 7200 });

    await waitingLeg();
    t.clock.advance(60_000);
    assert.deepEqual(await gauges(), { waiting: 2, oldest_seconds: 7260 });

    const confirmed = await t.request({
      method: 'POST',
      url: `/v1/seller/legs/${first}/1/confirm`,
      headers: { 'x-api-key': seller.seller_key },
    });
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    assert.deepEqual(await gauges(), { waiting: 1, oldest_seconds: 60 });
  });
});
