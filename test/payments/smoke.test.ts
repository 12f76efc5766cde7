import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';

describe('smoke', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant();
    await t.createSeller(thbSeller());
  });
  after(() => t.close());

  it('creates and reads a payment', async () => {
    const created = await t.call('POST', '/v1/trades', merchant.live, { order_id: 'o-1', amount: '100.00', currency: 'THB', return_url: 'https://shop.example/r' });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json().data.amount, 10000);
    const read = await t.call('GET', `/v1/payments/${created.json().data.id}`, merchant.live);
    assert.equal(read.statusCode, 200);
    assert.equal(read.json().data.status, 'matched');
  });
});
