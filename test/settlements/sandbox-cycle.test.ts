import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';

/** The sandbox `settlement_cycle` scenario makes a real sandbox batch: the sandbox key sees it, the live key never does. */
describe('settlements: sandbox settlement_cycle scenario', () => {
  let t: TestApp;
  let merchant: TestMerchant;

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant();
  });
  after(() => t.close());

  it("shows the scenario's batch to the sandbox key only", async () => {
    const simulated = await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, {
      scenario: 'settlement_cycle',
      amount: 10000,
      currency: 'THB',
    });
    assert.equal(simulated.statusCode, 201, simulated.body);
    const payment = simulated.json().data.payment;
    assert.equal(payment.status, 'settled');

    const list = await t.call('GET', '/v1/settlements', merchant.sandbox);
    assert.equal(list.statusCode, 200);
    assert.equal(list.json().data.length, 1);
    const batch = list.json().data[0];
    assert.deepEqual(
      [batch.status, batch.is_sandbox, batch.payment_count, batch.gross_minor, batch.fee_minor, batch.net_minor],
      ['completed', true, 1, 10000, 150, 9850],
    );
    const rows = await t.call('GET', `/v1/settlements/${batch.id}/payments`, merchant.sandbox);
    assert.deepEqual(
      rows.json().data.map((row: any) => row.payment_id),
      [payment.id],
    );
    const csv = await t.call('GET', `/v1/settlements/${batch.id}/export.csv`, merchant.sandbox);
    assert.equal(csv.body.trim().split('\r\n').length, 2);

    assert.deepEqual((await t.call('GET', '/v1/settlements', merchant.live)).json().data, []);
    for (const url of [
      `/v1/settlements/${batch.id}`,
      `/v1/settlements/${batch.id}/payments`,
      `/v1/settlements/${batch.id}/export.csv`,
    ]) {
      assert.equal((await t.call('GET', url, merchant.live)).statusCode, 404, url);
    }
    // a later run has nothing left to settle for that payment
    const run = await t.admin('POST', '/admin/settlements/run');
    assert.equal(run.json().data.payment_count, 0);
  });
});
