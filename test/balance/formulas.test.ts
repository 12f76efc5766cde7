import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { recalcBufferThresholds } from '../../src/modules/balance/service.ts';
import { sweepSellOrders } from '../../src/modules/sell-orders/close.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { createPendingFunds } from '../helpers/pending-funds.ts';
import { createSell, merchantCall, PAY, sellBody } from '../helpers/orders.ts';

const HOUR = 3600_000;

/**
 * Every balance field from its definition, with numbers worked by hand. The buffer is a real ledger balance
 * (funded here by an operator adjustment to the buffer account), and the trailing 30-day volume leaves out released
 * sell-order reserves, so cancel/expire cycles never raise a merchant's own deficit.
 */
describe('balance: each field from its formula', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  const adjust = (body: Record<string, unknown>) =>
    t.admin('POST', `/admin/merchants/${merchant.id}/ledger-adjustments`, {
      reason: 'test',
      direction: 'credit',
      ...body,
    });

  before(async () => {
    // threshold 10 % of volume (BALANCE_BUFFER_THRESHOLD_BPS default 1000), grace 7 days
    t = await startTestApp();
    merchant = await t.createMerchant('Balance');
  });
  after(() => t.close());

  it('available, buffer, net obligation, trailing volume, threshold, deficit and countdown', async () => {
    // Inflow: 100 PAY to available. Buffer: 5 PAY to the buffer account (no volume: it is not the available account).
    assert.equal((await adjust({ amount_micro_pay: 100 * PAY })).statusCode, 201);
    const buffered = await adjust({ amount_micro_pay: 5 * PAY, account: 'buffer' });
    assert.equal(buffered.statusCode, 201, buffered.body);
    // Two sell orders whose reserves come back: 30 PAY cancelled, 20 PAY expired unmatched. Credits to available are
    // now 100 + 30 + 20 = 150, but the volume is 100: the 50 were the merchant's own PAY coming back.
    const cancelled = await createSell(t, merchant.jwt, sellBody(30 * PAY));
    assert.equal(
      (await merchantCall(t, merchant.jwt, 'POST', `/v1/merchant-sell-orders/${cancelled.id}/cancel`)).json().data
        .status,
      'failed',
    );
    await createSell(t, merchant.jwt, sellBody(20 * PAY));
    t.clock.advance(25 * HOUR);
    assert.equal(await sweepSellOrders(t.application.payouts.sell_orders), 1);
    // Obligations: two validated pending-funds rows of 60 and 38 PAY = 98 PAY.
    assert.equal((await createPendingFunds(t, merchant.id, 60 * PAY)).statusCode, 201);
    assert.equal((await createPendingFunds(t, merchant.id, 38 * PAY)).statusCode, 201);

    await recalcBufferThresholds(t.application.balance);
    const admin = (await t.admin('GET', `/admin/merchants/${merchant.id}/deficit`)).json().data;
    // available 100, buffer 5, net obligation 98; volume 100 -> threshold 10;
    // deficit = max(0, 10 - (100 + 5 - 98)) = 3 PAY; countdown = 7 days (the deficit began now).
    assert.deepEqual(
      {
        available: admin.available_micro_pay,
        buffer: admin.buffer_micro_pay,
        net_obligation: admin.net_obligation_micro_pay,
        volume: admin.trailing_30d_volume_micro_pay,
        threshold: admin.buffer_threshold_micro_pay,
        deficit: admin.deficit_micro_pay,
        countdown: admin.countdown_days,
      },
      {
        available: 100 * PAY,
        buffer: 5 * PAY,
        net_obligation: 98 * PAY,
        volume: 100 * PAY,
        threshold: 10 * PAY,
        deficit: 3 * PAY,
        countdown: 7,
      },
    );
    const own = await t.request({
      method: 'GET',
      url: `/v1/merchants/${merchant.id}/balance`,
      headers: { authorization: `Bearer ${merchant.jwt}` },
    });
    assert.deepEqual(own.json().data, {
      available_micro_pay: 100 * PAY,
      buffer_micro_pay: 5 * PAY,
      refund_hold_micro_pay: 0,
      net_obligation_micro_pay: 98 * PAY,
      deficit_micro_pay: 3 * PAY,
      unconfirmed_fills_micro_pay: 0,
      shortfall_micro_pay: 0,
      apr_bps: 1800,
      entry_fee_usd: '25.00',
      countdown_days: 7,
    });

    // 4 more PAY in the buffer: 10 - (100 + 9 - 98) = -1 -> no deficit, countdown cleared.
    await adjust({ amount_micro_pay: 4 * PAY, account: 'buffer' });
    await recalcBufferThresholds(t.application.balance);
    const after_topup = (await t.admin('GET', `/admin/merchants/${merchant.id}/deficit`)).json().data;
    assert.deepEqual(
      [after_topup.buffer_micro_pay, after_topup.deficit_micro_pay, after_topup.countdown_days],
      [9 * PAY, 0, null],
    );
  });
});
