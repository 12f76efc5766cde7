import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { reconciliationDifferences } from '../helpers/orders.ts';
import { completedPayments } from '../helpers/payments.ts';

function refund(t: TestApp, key: string, payment_id: string, body: object = {}) {
  return t.request({
    method: 'POST',
    url: `/v1/payments/${payment_id}/refunds`,
    headers: { 'x-api-key': key, 'idempotency-key': randomUUID() },
    payload: body,
  });
}

/** Sandbox refunds play their whole life by simulation; a refund from PAY holds the refund's PAY (DESIGN 3c). */
describe('refunds: sandbox simulation and pay_balance holds', () => {
  let t: TestApp;
  let merchant: TestMerchant;

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Sandbox shop');
    await t.createSeller(thbSeller());
  });
  after(() => t.close());

  const sandboxPayment = async () => {
    const simulated = await t.call('POST', '/v1/sandbox/payments/simulate', merchant.test, {
      scenario: 'matched_then_completed',
      amount: 10_000,
      currency: 'THB',
    });
    assert.equal(simulated.statusCode, 201, simulated.body);
    return simulated.json().data.payment.id as string;
  };

  it('plays a sandbox refund to succeeded, with every step as a sandbox event, and to failed', async () => {
    const payment_id = await sandboxPayment();
    const created = await refund(t, merchant.test, payment_id, { amount: 4_000 });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().data.id;
    const done = await t.call('POST', `/v1/sandbox/refunds/${id}/simulate`, merchant.test, { outcome: 'succeeded' });
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.json().data.status, 'succeeded');
    assert.equal(done.json().data.destination_details.rail, 'promptpay');
    const types = (
      await t.db.selectFrom('events').select(['type', 'payload']).where('resource_id', '=', id).orderBy('seq').execute()
    ).map((row) => row.type);
    assert.deepEqual(types, ['refund.created', 'refund.updated', 'refund.updated', 'refund.succeeded']);
    const event = await t.event<{ sandbox?: boolean }>(id, 'refund.succeeded');
    assert.equal(event.sandbox, true);
    const payment = (await t.call('GET', `/v1/payments/${payment_id}`, merchant.test)).json().data;
    assert.deepEqual([payment.amount_refunded, payment.refunded], [4_000, false]);

    const rest = (await refund(t, merchant.test, payment_id)).json().data;
    assert.equal(rest.amount, 6_000);
    const failed = await t.call('POST', `/v1/sandbox/refunds/${rest.id}/simulate`, merchant.test, {
      outcome: 'failed',
    });
    assert.deepEqual(
      [failed.json().data.status, failed.json().data.failure_reason],
      ['failed', 'sandbox_simulated_failure'],
    );
    await t.event(rest.id, 'refund.failed');
    const again = await t.call('POST', `/v1/sandbox/refunds/${rest.id}/simulate`, merchant.test, {
      outcome: 'succeeded',
    });
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().error.code, 'REFUND_BAD_STATE');

    const whole = (await refund(t, merchant.test, payment_id)).json().data;
    await t.call('POST', `/v1/sandbox/refunds/${whole.id}/simulate`, merchant.sandbox, { outcome: 'succeeded' });
    const refunded = await t.event<{ data: { refunded: boolean; amount_refunded: number } }>(
      payment_id,
      'payment.refunded',
    );
    assert.deepEqual([refunded.data.refunded, refunded.data.amount_refunded], [true, 10_000]);

    // A sandbox refund from PAY: its hold is paid out (burned) by the simulation, and reconciliation expects it.
    const from_pay = await sandboxPayment();
    const held = await refund(t, merchant.test, from_pay, { amount: 1_000, funding: 'pay_balance' });
    assert.equal(held.statusCode, 201, held.body);
    const paid = await t.call('POST', `/v1/sandbox/refunds/${held.json().data.id}/simulate`, merchant.test, {
      outcome: 'succeeded',
    });
    assert.equal(paid.json().data.status, 'succeeded');
    assert.deepEqual(await reconciliationDifferences(t), []);
  });

  it('refuses a live key with 403 SANDBOX_ONLY, an unknown refund with 404, a bad outcome with 400', async () => {
    const payment_id = await sandboxPayment();
    const id = (await refund(t, merchant.test, payment_id, { amount: 100 })).json().data.id;
    const live = await t.call('POST', `/v1/sandbox/refunds/${id}/simulate`, merchant.live, { outcome: 'succeeded' });
    assert.equal(live.statusCode, 403);
    assert.equal(live.json().error.code, 'SANDBOX_ONLY');
    const unknown = await t.call('POST', `/v1/sandbox/refunds/${randomUUID()}/simulate`, merchant.test, {
      outcome: 'failed',
    });
    assert.equal(unknown.statusCode, 404);
    const bad = await t.call('POST', `/v1/sandbox/refunds/${id}/simulate`, merchant.test, { outcome: 'maybe' });
    assert.equal(bad.statusCode, 400);
    assert.equal(
      (await t.call('POST', `/v1/sandbox/refunds/${id}/simulate`, undefined, { outcome: 'failed' })).statusCode,
      401,
    );
  });

  it("holds the refund's share of the payment's PAY before its fee; not enough available is 409; cancel gives it back", async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'pay-balance-1', amount: 10_000 }]);
    const payment = (await t.call('GET', `/v1/payments/${payment_id}`, merchant.live)).json().data;
    const credited = payment.match_details.reduce(
      (sum: number, leg: { amount_micro_pay: number }) => sum + leg.amount_micro_pay,
      0,
    );
    const balance = async () =>
      (
        await t.call('GET', `/v1/merchants/${merchant.id}/balance`, undefined, undefined, {
          authorization: `Bearer ${merchant.jwt}`,
        })
      ).json().data;
    const before_refund = await balance();
    assert.equal(before_refund.available_micro_pay, credited - payment.fee_micro_pay);

    // The whole payment's PAY before its fee is more than the merchant holds: the fee is not returned.
    const whole = await refund(t, merchant.live, payment_id!, { funding: 'pay_balance' });
    assert.equal(whole.statusCode, 409, whole.body);
    assert.equal(whole.json().error.code, 'REFUND_INSUFFICIENT_BALANCE');
    assert.deepEqual(
      await t.call('GET', `/v1/refunds?payment_id=${payment_id}`, merchant.live).then((r) => r.json().data),
      [],
    );

    const third = await refund(t, merchant.live, payment_id!, { funding: 'pay_balance', amount: 3_333 });
    assert.equal(third.statusCode, 201, third.body);
    const expected_hold = Math.ceil((credited * 3_333) / 10_000);
    assert.equal(third.json().data.amount_micro_pay, expected_hold);
    assert.equal(third.json().data.funding, 'pay_balance');
    const held = await balance();
    assert.deepEqual(
      [held.available_micro_pay, held.refund_hold_micro_pay],
      [before_refund.available_micro_pay - expected_hold, expected_hold],
    );
    assert.deepEqual(await reconciliationDifferences(t), []);

    await t.call('POST', `/v1/refunds/${third.json().data.id}/cancel`, merchant.live);
    const back = await balance();
    assert.deepEqual([back.available_micro_pay, back.refund_hold_micro_pay], [before_refund.available_micro_pay, 0]);
    assert.deepEqual(await reconciliationDifferences(t), []);
  });
});
