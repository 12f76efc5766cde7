import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, thbSeller, type TestApp } from '../helpers/app.ts';
import { buyBody, createBuy, createSell, matchAndInstruct, merchantCall, PAY, sellBody } from '../helpers/orders.ts';
import { newSlip } from '../helpers/slips.ts';

/** An operator sees every unit of PAY that exists and why, per cause and mode. */
describe('GET /admin/ledger/supply: minted and burned per cause', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it('accounts for seller funding, adjustments, buy-order fills and sell-order completions; circulation matches verify', async () => {
    const seller = await t.createMerchant('Seller');
    const buyer = await t.createMerchant('Buyer');
    // 350.00 THB at 35 THB/PAY: 10 PAY of seller funding.
    await t.createSeller(thbSeller(35_000, '35.00'));
    const adjusted = await t.admin('POST', `/admin/merchants/${seller.id}/ledger-adjustments`, {
      amount_micro_pay: 20 * PAY,
      direction: 'credit',
      reason: 'opening balance',
    });
    assert.equal(adjusted.statusCode, 201, adjusted.body);
    await t.admin('POST', `/admin/merchants/${seller.id}/ledger-adjustments`, {
      amount_micro_pay: 2 * PAY,
      direction: 'debit',
      reason: 'correction',
    });
    // A 6 PAY sell filled by a 4 PAY buy and then a 2 PAY buy; both transfers are confirmed: 6 PAY minted, 6 burned.
    const sell = await createSell(t, seller.jwt, sellBody(6 * PAY, 'THB', 21_000));
    await createBuy(t, buyer.jwt, buyBody(4 * PAY, 'THB', 14_000));
    await createBuy(t, buyer.jwt, buyBody(2 * PAY, 'THB', 7_000));
    assert.equal(await matchAndInstruct(t), 2);
    // Each buyer's transfer is confirmed with its own slip; the second completes the order.
    const confirm = () =>
      merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${sell.id}/confirm-cash-leg`, {
        receipt_base64: newSlip().bytes.toString('base64'),
        content_type: 'image/png',
      });
    assert.equal((await confirm()).json().data.status, 'cash_leg_in_flight');
    const confirmed = await confirm();
    assert.equal(confirmed.json().data.status, 'completed', confirmed.body);

    const response = await t.admin('GET', '/admin/ledger/supply');
    assert.equal(response.statusCode, 200, response.body);
    const live = response.json().data.live;
    const cause = (name: string) => live.causes.find((c: { cause: string }) => c.cause === name);
    assert.deepEqual(cause('seller_funding'), {
      cause: 'seller_funding',
      minted_micro_pay: 10 * PAY,
      burned_micro_pay: 0,
      net_micro_pay: 10 * PAY,
      mints: 1,
      burns: 0,
    });
    assert.deepEqual(cause('adjustment'), {
      cause: 'adjustment',
      minted_micro_pay: 20 * PAY,
      burned_micro_pay: 2 * PAY,
      net_micro_pay: 18 * PAY,
      mints: 1,
      burns: 1,
    });
    assert.deepEqual(cause('buy_order_fill'), {
      cause: 'buy_order_fill',
      minted_micro_pay: 6 * PAY,
      burned_micro_pay: 0,
      net_micro_pay: 6 * PAY,
      mints: 2,
      burns: 0,
    });
    assert.deepEqual(cause('sell_order_completion'), {
      cause: 'sell_order_completion',
      minted_micro_pay: 0,
      burned_micro_pay: 6 * PAY,
      net_micro_pay: -6 * PAY,
      mints: 0,
      burns: 1,
    });
    assert.equal(cause('other').mints + cause('other').burns, 0);
    assert.deepEqual(
      [live.minted_micro_pay, live.burned_micro_pay, live.circulation_micro_pay],
      [36 * PAY, 8 * PAY, 28 * PAY],
    );
    const verify = (await t.admin('GET', '/admin/ledger/verify')).json().data;
    assert.equal(
      verify.circulation_micro_pay,
      live.circulation_micro_pay + response.json().data.sandbox.circulation_micro_pay,
    );
    assert.equal((await t.request({ method: 'GET', url: '/admin/ledger/supply' })).statusCode, 401);
  });
});
