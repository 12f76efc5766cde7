import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fillFiatAmount } from '../../src/modules/payouts/matcher.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import {
  buyBody,
  createBuy,
  createSell,
  expectError,
  fund,
  matchAndInstruct,
  merchantCall,
  MINT_SOURCE,
  PAY,
  reconciliationDifferences,
  sellBody,
} from '../helpers/orders.ts';

describe('fills round fairly: at the ask half up, never above the bid, never 0', () => {
  it('fillFiatAmount: the ask rounded half up, capped at the bid rounded down', () => {
    // 1 PAY of a sell asking 100 satang for 3 PAY: 33.33 -> 33; 1.5 PAY: 50; 2 PAY: 66.67 -> 67
    const sell = { target_fiat_amount: 100, amount_micro_pay: 3 * PAY };
    const generous = { fiat_amount: 1_000, amount_micro_pay: 3 * PAY };
    assert.equal(fillFiatAmount(sell, generous, PAY), 33);
    assert.equal(fillFiatAmount(sell, generous, 1.5 * PAY), 50);
    assert.equal(fillFiatAmount(sell, generous, 2 * PAY), 67);
    // ask 1.5 satang per PAY rounds to 2, but a bid of exactly 1.5 per PAY caps it at 1
    assert.equal(
      fillFiatAmount({ target_fiat_amount: 3, amount_micro_pay: 2 * PAY }, buyBody(2 * PAY, 'THB', 3), PAY),
      1,
    );
    // a tenth of a satang rounds to 0: such a fill is not made
    assert.equal(fillFiatAmount({ target_fiat_amount: 1, amount_micro_pay: 10 * PAY }, buyBody(PAY, 'THB', 1), PAY), 0);
  });

  describe('through the matcher', () => {
    let t: TestApp;
    let seller: TestMerchant;
    let buyers: TestMerchant[];

    before(async () => {
      t = await startTestApp({ env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE } });
      seller = await t.createMerchant('Seller');
      buyers = [await t.createMerchant('B1'), await t.createMerchant('B2'), await t.createMerchant('B3')];
      await fund(t, seller.id, 100 * PAY);
    });
    after(() => t.close());

    it('no fill charges above its bid: three buys at 34 satang per PAY fill a sell of 3 PAY asking 101 at 34 each', async () => {
      const sell = await createSell(t, seller.jwt, sellBody(3 * PAY, 'USD', 101));
      const buys = [];
      for (const buyer of buyers) buys.push(await createBuy(t, buyer.jwt, buyBody(PAY, 'USD', 34)));
      assert.equal(await matchAndInstruct(t), 3);
      const fills = await t.db
        .selectFrom('order_fills')
        .select(['buy_order_id', 'fiat_amount'])
        .where('sell_order_id', '=', sell.id)
        .execute();
      // 101 / 3 = 33.67 per fill, half up 34 each: none above the 34 bid (the remainder rule charged the last 35)
      assert.deepEqual(fills.map((fill) => fill.fiat_amount).sort(), [34, 34, 34]);
      const order = (await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${sell.id}`)).json().data;
      assert.equal(order.filled_fiat_amount, 102);
      assert.ok(Math.abs(order.filled_fiat_amount - 101) <= fills.length, 'at most one minor unit per fill');
      for (const [index, buy] of buys.entries()) {
        const view = (await merchantCall(t, buyers[index]!.jwt, 'GET', `/v1/merchant-buy-orders/${buy.id}`)).json()
          .data;
        assert.ok(view.filled_fiat_amount <= 34, `buy ${index} pays at most its bid`);
      }
      assert.deepEqual(await reconciliationDifferences(t, { except_test_funding: true }), []);
    });

    it('a fill worth less than one minor unit is not made: no fill row, no mint, both orders stay pending', async () => {
      const sell = await createSell(t, seller.jwt, sellBody(10 * PAY, 'SGD', 1));
      const buy = await createBuy(t, buyers[0]!.jwt, buyBody(PAY, 'SGD', 1));
      assert.equal(await matchAndInstruct(t), 0);
      const fills = await t.db.selectFrom('order_fills').select('id').where('sell_order_id', '=', sell.id).execute();
      assert.equal(fills.length, 0);
      const mint = await t.db
        .selectFrom('ledger_transfers')
        .select('id')
        .where('key', '=', `buy_order:${buy.id}:fill:${sell.id}`)
        .execute();
      assert.equal(mint.length, 0);
      assert.equal(
        (await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${sell.id}`)).json().data.status,
        'pending',
      );
      assert.equal(
        (await merchantCall(t, buyers[0]!.jwt, 'GET', `/v1/merchant-buy-orders/${buy.id}`)).json().data.status,
        'pending',
      );
    });

    it('a buy or sell worth less than one minor unit at its own price is 400 VALIDATION_ERROR', async () => {
      expectError(
        await merchantCall(t, seller.jwt, 'POST', '/v1/merchant-sell-orders', sellBody(PAY, 'THB', 0)),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await merchantCall(t, buyers[0]!.jwt, 'POST', '/v1/merchant-buy-orders', buyBody(PAY, 'THB', 0)),
        400,
        'VALIDATION_ERROR',
      );
    });
  });
});
