import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accounts } from '../../src/modules/ledger/port.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { confirmAwaitingLegs, drainVerdicts, uploadProof } from '../helpers/payments.ts';

/** DESIGN 3a "Refused completion": the seller leaves matching until an operator funds it again. */
describe('a completion the ledger refuses takes its seller out of matching until it is funded', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let order = 0;
  const trade = (amount: number) =>
    t.call('POST', '/v1/trades', merchant.live, {
      order_id: `rc-${++order}`,
      amount,
      currency: 'THB',
      return_url: 'https://shop.example/r',
    });

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant();
  });
  after(() => t.close());

  it('fails the payment, suspends the seller, never matches it again; funding puts it back', async () => {
    // 1,000.00 THB at 34 THB/PAY: 29,411,764 micro-PAY; all but 1 PAY leaves the seller's account outside the gateway
    const seller = await t.createSeller(thbSeller(100_000, '34.00', '0822222222'));
    await t.application.ledger.transfer({
      key: `test-drain-${seller.id}`,
      kind: 'burn',
      debit_account: accounts.seller(seller.id, false),
      credit_account: accounts.world(false),
      amount_micro_pay: 28_411_764,
    });
    const refused = await trade(5_000);
    assert.equal(refused.statusCode, 201, refused.body);
    await uploadProof(t, merchant.live, refused.json().data.id);
    await drainVerdicts(t);
    await confirmAwaitingLegs(t);
    const failed = (await t.call('GET', `/v1/payments/${refused.json().data.id}`, merchant.live)).json().data;
    assert.deepEqual([failed.status, failed.failure_reason], ['failed', 'ledger_insufficient_funds']);
    const row = await t.db.selectFrom('sellers').selectAll().where('id', '=', seller.id).executeTakeFirstOrThrow();
    assert.deepEqual([row.active, row.suspension_reason, row.reserved_minor], [false, 'ledger_insufficient_funds', 0]);

    // never matched again, not even for an amount its PAY would cover, and the rates no longer show it
    for (const amount of [5_000, 100]) {
      const next = await trade(amount);
      assert.equal(next.statusCode, 409, next.body);
      assert.equal(next.json().error.code, 'PAYMENT_INSUFFICIENT_LIQUIDITY');
    }
    const rates = await t.call('GET', '/v1/rates?currency=THB&payment_method=promptpay', merchant.live);
    assert.equal(rates.json().data.offers, 0, rates.body);

    // an operator funds it: back in matching, and the same payment completes
    const funded = await t.request({
      method: 'POST',
      url: `/admin/sellers/${seller.id}/funding`,
      headers: {
        authorization: 'Bearer test-admin-token-0123456789abcdef',
        'x-actor-user-id': 'ops-1',
        'x-actor-role': 'super_admin',
        'idempotency-key': 'fund-1',
      },
      payload: { amount_micro_pay: 28_411_764 },
    });
    assert.equal(funded.statusCode, 200, funded.body);
    assert.deepEqual(
      [funded.json().data.active, funded.json().data.suspension_reason, funded.json().data.balance_micro_pay],
      [true, null, 29_411_764],
    );
    const again = await trade(5_000);
    assert.equal(again.statusCode, 201, again.body);
    await uploadProof(t, merchant.live, again.json().data.id);
    await drainVerdicts(t);
    await confirmAwaitingLegs(t);
    assert.equal(
      (await t.call('GET', `/v1/payments/${again.json().data.id}`, merchant.live)).json().data.status,
      'completed',
    );
    const audit = await t.db
      .selectFrom('admin_audit_log')
      .select('action')
      .where('target_id', '=', seller.id)
      .execute();
    assert.deepEqual(
      audit.map((entry) => entry.action),
      ['seller.funding'],
    );
    const supply = (await t.admin('GET', '/admin/ledger/supply')).json().data.live;
    assert.equal(supply.causes.find((cause: { cause: string }) => cause.cause === 'seller_funding').mints, 2);
    assert.equal((await t.admin('GET', '/admin/ledger/verify')).json().data.ok, true);
  });

  it('funding an unknown seller is 404; without the admin token 401', async () => {
    const missing = await t.admin('POST', '/admin/sellers/00000000-0000-4000-8000-000000000000/funding', {
      amount_micro_pay: 1,
    });
    assert.equal(missing.statusCode, 404, missing.body);
    assert.equal(
      (
        await t.request({
          method: 'POST',
          url: '/admin/sellers/00000000-0000-4000-8000-000000000000/funding',
          payload: { amount_micro_pay: 1 },
        })
      ).statusCode,
      401,
    );
  });
});
