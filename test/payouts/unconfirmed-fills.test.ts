import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import {
  balancesOf,
  buyBody,
  createBuy,
  createSell,
  expectError,
  fund,
  inFlightSell,
  matchAndInstruct,
  merchantCall,
  MINT_SOURCE,
  PAY,
  receipt,
  scriptedValidator,
  sellBody,
} from '../helpers/orders.ts';

/** PAY minted to a buyer at match cannot be cashed out before its own fill's cash leg is confirmed. */
describe('PAY from an unconfirmed fill cannot be cashed out', () => {
  let t: TestApp;
  let seller: TestMerchant;
  let buyer: TestMerchant;
  let other_buyer: TestMerchant;
  const validator = scriptedValidator();

  before(async () => {
    t = await startTestApp({ env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE }, overrides: { validator } });
    seller = await t.createMerchant('Seller');
    buyer = await t.createMerchant('Buyer');
    other_buyer = await t.createMerchant('Other Buyer');
    await fund(t, seller.id, 1_000 * PAY);
  });
  after(() => t.close());

  const balance = async (merchant: TestMerchant) => {
    const response = await merchantCall(t, merchant.jwt, 'GET', `/v1/merchants/${merchant.id}/balance`);
    assert.equal(response.statusCode, 200, response.body);
    return response.json().data as { available_micro_pay: number; unconfirmed_fills_micro_pay: number };
  };
  const sellAttempt = (merchant: TestMerchant, amount_micro_pay: number) =>
    merchantCall(t, merchant.jwt, 'POST', '/v1/merchant-sell-orders', sellBody(amount_micro_pay, 'THB', 100_000));
  const confirm = (sell_order_id: string, buy_order_id?: string) =>
    merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${sell_order_id}/confirm-cash-leg`, {
      receipt_base64: receipt(),
      content_type: 'application/pdf',
      ...(buy_order_id ? { buy_order_id } : {}),
    });

  it('a sell order reserves at most available less unconfirmed fills; the fill counts once its cash leg is confirmed', async () => {
    await fund(t, buyer.id, 5 * PAY);
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, 10 * PAY);
    assert.deepEqual(
      [(await balance(buyer)).available_micro_pay, (await balance(buyer)).unconfirmed_fills_micro_pay],
      [15 * PAY, 10 * PAY],
    );
    const refused = await sellAttempt(buyer, 5 * PAY + 1);
    expectError(refused, 409, 'SELL_ORDER_INSUFFICIENT_BALANCE');
    assert.match(refused.json().error.details[0].message, /10000000 from fills/);
    assert.equal((await balancesOf(t, buyer.id)).reserve, 0, 'a refused order reserves nothing');
    const allowed = await sellAttempt(buyer, 5 * PAY);
    assert.equal(allowed.statusCode, 201, allowed.body);

    const confirmed = await confirm(sell.id);
    assert.equal(confirmed.json().data.status, 'completed', confirmed.body);
    assert.equal((await balance(buyer)).unconfirmed_fills_micro_pay, 0);
    const now_allowed = await sellAttempt(buyer, 10 * PAY);
    assert.equal(now_allowed.statusCode, 201, now_allowed.body);
  });

  it('fill by fill: a verified transfer frees that fill only', async () => {
    const sell = await createSell(t, seller.jwt, sellBody(10 * PAY, 'AUD', 200));
    const first = await createBuy(t, buyer.jwt, buyBody(4 * PAY, 'AUD', 80));
    const second = await createBuy(t, other_buyer.jwt, buyBody(6 * PAY, 'AUD', 120));
    assert.equal(await matchAndInstruct(t), 2);
    assert.equal((await balance(buyer)).unconfirmed_fills_micro_pay, 4 * PAY);
    assert.equal((await balance(other_buyer)).unconfirmed_fills_micro_pay, 6 * PAY);
    const response = await confirm(sell.id, second.id);
    assert.equal(response.json().data.status, 'cash_leg_in_flight', response.body);
    assert.equal((await balance(other_buyer)).unconfirmed_fills_micro_pay, 0);
    assert.equal((await balance(buyer)).unconfirmed_fills_micro_pay, 4 * PAY);
    expectError(await sellAttempt(buyer, 1), 409, 'SELL_ORDER_INSUFFICIENT_BALANCE');
    assert.equal((await sellAttempt(other_buyer, 6 * PAY)).statusCode, 201);
    assert.equal((await confirm(sell.id, first.id)).json().data.status, 'completed');
    assert.equal((await balance(buyer)).unconfirmed_fills_micro_pay, 0);
  });

  it('many sell orders at once never reserve more than available less unconfirmed fills', async () => {
    const racer = await t.createMerchant('Racer');
    await fund(t, racer.id, 10 * PAY);
    await inFlightSell(t, seller.jwt, racer.jwt, 10 * PAY);
    assert.equal((await balancesOf(t, racer.id)).available, 20 * PAY);
    const responses = await Promise.all(
      Array.from({ length: 12 }, () =>
        merchantCall(t, racer.jwt, 'POST', '/v1/merchant-sell-orders', sellBody(3 * PAY, 'THB', 100_000), randomUUID()),
      ),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    assert.deepEqual(statuses, [...Array(3).fill(201), ...Array(9).fill(409)], statuses.join(','));
    for (const response of responses.filter((r) => r.statusCode === 409))
      assert.equal(response.json().error.code, 'SELL_ORDER_INSUFFICIENT_BALANCE');
    const after_race = await balancesOf(t, racer.id);
    assert.deepEqual([after_race.reserve, after_race.available], [9 * PAY, 11 * PAY]);
    assert.ok(after_race.available >= (await balance(racer)).unconfirmed_fills_micro_pay);
  });
});
