import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sweepSellOrders } from '../../src/modules/sell-orders/close.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import {
  balancesOf,
  buyBody,
  createBuy,
  createSell,
  fund,
  matchAndInstruct,
  merchantCall,
  MINT_SOURCE,
  PAY,
  reconciliationDifferences,
  sellBody,
} from '../helpers/orders.ts';

const HOUR = 3600_000;

/**
 * A sell order filled by two buyers who both paid, whose seller stayed silent until the cash leg failed: each buyer's
 * own dispute, resolved for it, gives that buyer its own fill back (a fill moves at most once; an earlier resolution
 * for the other buyer does not use up the order). Found by the whole-flow simulation.
 */
describe('disputes: two buyers of one failed sell order each get their own fill back', () => {
  let t: TestApp;
  let seller: TestMerchant;
  let first: TestMerchant;
  let second: TestMerchant;

  before(async () => {
    t = await startTestApp({ env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE, CASH_LEG_RETRY_TIMEOUT_HOURS: '48' } });
    seller = await t.createMerchant('Silent seller');
    first = await t.createMerchant('First buyer');
    second = await t.createMerchant('Second buyer');
    await fund(t, seller.id, 100 * PAY);
  });
  after(() => t.close());

  const resolveFor = async (jwt: string, sell_order_id: string) => {
    const opened = await merchantCall(t, jwt, 'POST', '/v1/merchant-disputes', { sell_order_id, notes: 'I paid' });
    assert.equal(opened.statusCode, 201, opened.body);
    const id = opened.json().data.id as string;
    assert.equal((await t.admin('POST', `/admin/disputes/${id}/investigate`, {})).statusCode, 200);
    const resolved = await t.admin('POST', `/admin/disputes/${id}/resolve`, { outcome: 'favor_counterparty' });
    assert.equal(resolved.statusCode, 200, resolved.body);
    const { ledger_effect, amount_micro_pay } = resolved.json().data.resolution;
    return { ledger_effect, amount_micro_pay } as { ledger_effect: string; amount_micro_pay: number | null };
  };

  it("the second buyer's favor_counterparty moves its own fill after the first buyer's moved the first", async () => {
    const sell = await createSell(t, seller.jwt, sellBody(6 * PAY, 'THB', 21_000));
    await createBuy(t, first.jwt, buyBody(2 * PAY, 'THB', 7_000));
    await matchAndInstruct(t);
    await createBuy(t, second.jwt, buyBody(4 * PAY, 'THB', 14_000));
    await matchAndInstruct(t);
    const read = async () =>
      (await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${sell.id}`)).json().data;
    assert.equal((await read()).status, 'cash_leg_in_flight');
    t.clock.advance(49 * HOUR);
    await sweepSellOrders(t.application.payouts.sell_orders);
    assert.equal((await read()).status, 'failed');
    const before_first = await balancesOf(t, first.id);
    const before_second = await balancesOf(t, second.id);
    const seller_before = await balancesOf(t, seller.id);
    assert.deepEqual([before_first.available, before_second.available], [0, 0], 'both fills were taken back');

    assert.deepEqual(await resolveFor(first.jwt, sell.id), {
      ledger_effect: 'return_to_buyers',
      amount_micro_pay: 2 * PAY,
    });
    assert.deepEqual(await resolveFor(second.jwt, sell.id), {
      ledger_effect: 'return_to_buyers',
      amount_micro_pay: 4 * PAY,
    });
    assert.equal((await balancesOf(t, first.id)).available, 2 * PAY);
    assert.equal((await balancesOf(t, second.id)).available, 4 * PAY);
    assert.equal((await balancesOf(t, seller.id)).available, seller_before.available - 6 * PAY);
    // A third resolution for the first buyer moves nothing: its fill already went back.
    assert.deepEqual(await resolveFor(first.jwt, sell.id), { ledger_effect: 'none', amount_micro_pay: null });
    assert.equal((await balancesOf(t, first.id)).available, 2 * PAY);
    assert.deepEqual(await reconciliationDifferences(t, { except_test_funding: true }), []);
  });
});
