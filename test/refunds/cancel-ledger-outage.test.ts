import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { switchableLedger } from '../helpers/orders.ts';
import { completedPayments } from '../helpers/payments.ts';

/**
 * Cancelling a pay_balance refund gives its hold back through the ledger; with the ledger unreachable the cancel is the
 * documented 502 LEDGER_UNAVAILABLE (found by the whole-flow simulation), and nothing moved: the refund and its hold
 * stay as they were, and the same cancel succeeds once the ledger is back.
 */
describe('refunds: cancel while the ledger is unreachable', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  const ledger = switchableLedger();

  before(async () => {
    t = await startTestApp({ overrides: { ledger } });
    ledger.attach(t);
    merchant = await t.createMerchant('Outage shop');
    await t.createSeller(thbSeller());
  });
  after(() => t.close());

  it('answers 502 LEDGER_UNAVAILABLE, keeps the refund and its hold, and cancels once the ledger is back', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'outage-1', amount: 10_000 }]);
    const created = await t.request({
      method: 'POST',
      url: `/v1/payments/${payment_id}/refunds`,
      headers: { 'x-api-key': merchant.live, 'idempotency-key': randomUUID() },
      payload: { funding: 'pay_balance', amount: 2_500 },
    });
    assert.equal(created.statusCode, 201, created.body);
    const refund = created.json().data;
    const hold = async () =>
      (
        await t.call('GET', `/v1/merchants/${merchant.id}/balance`, undefined, undefined, {
          authorization: `Bearer ${merchant.jwt}`,
        })
      ).json().data.refund_hold_micro_pay;
    assert.equal(await hold(), refund.amount_micro_pay);

    ledger.down_for.add('transfer');
    const refused = await t.call('POST', `/v1/refunds/${refund.id}/cancel`, merchant.live);
    ledger.down_for.clear();
    assert.equal(refused.statusCode, 502, refused.body);
    assert.equal(refused.json().error.code, 'LEDGER_UNAVAILABLE');
    const kept = await t.call('GET', `/v1/refunds/${refund.id}`, merchant.live);
    assert.equal(kept.json().data.status, 'requires_action');
    assert.equal(await hold(), refund.amount_micro_pay);

    const canceled = await t.call('POST', `/v1/refunds/${refund.id}/cancel`, merchant.live);
    assert.equal(canceled.statusCode, 200, canceled.body);
    assert.equal(canceled.json().data.status, 'canceled');
    assert.equal(await hold(), 0);
  });

  it('a refund paid out by a sell order: 502 LEDGER_UNAVAILABLE keeps the refund and its order, then cancels both', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'outage-2', amount: 10_000 }]);
    const created = await t.request({
      method: 'POST',
      url: `/v1/payments/${payment_id}/refunds`,
      headers: { 'x-api-key': merchant.live, 'idempotency-key': randomUUID() },
      payload: {
        funding: 'pay_balance',
        amount: 2_500,
        destination: { rail: 'promptpay', promptpay_id: '0899999999' },
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const refund = created.json().data;
    const order = () =>
      t.db
        .selectFrom('sell_orders')
        .select(['status', 'failure_reason'])
        .where('id', '=', refund.sell_order_id)
        .executeTakeFirstOrThrow();
    assert.equal((await order()).status, 'pending');

    ledger.down_for.add('transfer');
    const refused = await t.call('POST', `/v1/refunds/${refund.id}/cancel`, merchant.live);
    ledger.down_for.clear();
    assert.equal(refused.statusCode, 502, refused.body);
    assert.equal(refused.json().error.code, 'LEDGER_UNAVAILABLE');
    assert.equal((await t.call('GET', `/v1/refunds/${refund.id}`, merchant.live)).json().data.status, 'pending');
    assert.deepEqual(await order(), { status: 'pending', failure_reason: null });

    const canceled = await t.call('POST', `/v1/refunds/${refund.id}/cancel`, merchant.live);
    assert.equal(canceled.statusCode, 200, canceled.body);
    assert.equal(canceled.json().data.status, 'canceled');
    assert.deepEqual(await order(), { status: 'failed', failure_reason: 'cancelled_by_merchant' });
  });
});
