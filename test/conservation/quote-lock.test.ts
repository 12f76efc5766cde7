import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';

/** DESIGN 3a "Quote-locked trades": a seller never sells below its posted rate. */
describe('quote-locked trades fill only from offers at or below the locked rate', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let order = 0;
  const lockAt = async (price: string) => {
    await t.admin('PUT', '/admin/fx/reference-prices', { base: 'PAY', quote: 'THB', price });
    const response = await t.call('POST', '/v1/fx/quote-locks', merchant.live, { currency: 'THB' });
    assert.equal(response.statusCode, 201, response.body);
    return response.json().data.id as string;
  };
  const trade = (amount: number, quote_lock_id: string) =>
    t.call('POST', '/v1/trades', merchant.live, {
      order_id: `ql-${++order}`,
      amount,
      currency: 'THB',
      return_url: 'https://shop.example/r',
      quote_lock_id,
    });

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant();
  });
  after(() => t.close());

  it('a lock at 12.50 against the only offer at 25.00 is 409 PAYMENT_INSUFFICIENT_LIQUIDITY; nothing is kept', async () => {
    const dear = await t.createSeller(thbSeller(1_000_000, '25.00', '0811111111'));
    const refused = await trade(10_000, await lockAt('12.50'));
    assert.equal(refused.statusCode, 409, refused.body);
    assert.equal(refused.json().error.code, 'PAYMENT_INSUFFICIENT_LIQUIDITY');
    const seller = await t.db
      .selectFrom('sellers')
      .select('reserved_minor')
      .where('id', '=', dear.id)
      .executeTakeFirstOrThrow();
    assert.equal(seller.reserved_minor, 0);
    assert.equal(
      (await t.db.selectFrom('payments').select('id').where('merchant_id', '=', merchant.id).execute()).length,
      0,
    );
  });

  it('with a cheaper offer beside it, the lock fills only from the offer at or below its rate', async () => {
    const cheap = await t.createSeller(thbSeller(5_000, '12.00', '0822222222'));
    const filled = await trade(5_000, await lockAt('12.50'));
    assert.equal(filled.statusCode, 201, filled.body);
    assert.deepEqual(
      filled.json().data.match_details.map((leg: { seller_id: string; rate: string }) => [leg.seller_id, leg.rate]),
      [[cheap.id, '12.50']],
    );
    // the cheap offer is used up: what is left (the 25.00 offer) may not serve a 12.50 lock
    const more = await trade(100, await lockAt('12.50'));
    assert.equal(more.statusCode, 409, more.body);
    assert.equal(more.json().error.code, 'PAYMENT_INSUFFICIENT_LIQUIDITY');
    // at 25.00 the dear offer serves it
    const at_rate = await trade(100, await lockAt('25.00'));
    assert.equal(at_rate.statusCode, 201, at_rate.body);
  });
});
