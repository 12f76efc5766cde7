import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { accounts } from '../../src/modules/ledger/port.ts';
import { sweepSellOrders } from '../../src/modules/sell-orders/close.ts';
import { ADMIN_HEADERS, startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { uniquePng } from '../helpers/files.ts';
import {
  balancesOf,
  expectError,
  fund,
  inFlightSell,
  merchantCall,
  MINT_SOURCE,
  PAY,
  receipt,
  reconciliationDifferences,
  scriptedValidator,
} from '../helpers/orders.ts';

const HOUR = 3600_000;

/**
 * The buyer's recourse and resolutions that follow the fiat: a resolution answers whether the buyers paid the seller
 * and PAY follows the answer, never minted or burned on one side, so the supply after it is the supply before the match.
 */
describe('disputes follow the fiat', () => {
  let t: TestApp;
  let seller: TestMerchant;
  let buyer: TestMerchant;
  let stranger: TestMerchant;
  const validator = scriptedValidator();

  before(async () => {
    t = await startTestApp({
      env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE, CASH_LEG_RETRY_MAX: '2', CASH_LEG_RETRY_TIMEOUT_HOURS: '48' },
      overrides: { validator },
    });
    seller = await t.createMerchant('Seller');
    buyer = await t.createMerchant('Buyer');
    stranger = await t.createMerchant('Stranger');
    await fund(t, seller.id, 1_000 * PAY);
  });
  after(() => t.close());

  /** PAY in circulation (minted less burned), the figure a resolution must leave as it was before the match. */
  const circulation = async () => (await t.application.ledger.verify()).circulation_micro_pay;
  const open = (jwt: string, sell_order_id: string, extra: Record<string, unknown> = {}) =>
    merchantCall(t, jwt, 'POST', '/v1/merchant-disputes', {
      sell_order_id,
      notes: 'I paid / I was not paid',
      ...extra,
    });
  const resolve = async (dispute_id: string, outcome: string) => {
    assert.equal((await t.admin('POST', `/admin/disputes/${dispute_id}/investigate`, {})).statusCode, 200);
    const response = await t.admin('POST', `/admin/disputes/${dispute_id}/resolve`, { outcome });
    assert.equal(response.statusCode, 200, response.body);
    return response.json().data;
  };
  const sellOrder = async (id: string) =>
    (await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${id}`)).json().data;
  const confirm = (id: string) =>
    merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${id}/confirm-cash-leg`, {
      receipt_base64: receipt(),
      content_type: 'application/pdf',
    });
  const failBySweep = async (id: string) => {
    validator.next.push('failed', 'failed');
    await confirm(id);
    await confirm(id);
    await sweepSellOrders(t.application.payouts.sell_orders);
    assert.equal((await sellOrder(id)).status, 'failed');
  };

  it('the buyer opens a dispute on the order it filled (opened_by buyer, its slip kept); both parties read it, nobody else', async () => {
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, 2 * PAY);
    const slip = uniquePng();
    expectError(await open(buyer.jwt, sell.id, { evidence_base64: slip.toString('base64') }), 400, 'VALIDATION_ERROR');
    expectError(
      await open(buyer.jwt, sell.id, { evidence_base64: '%%%', content_type: 'image/png' }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await open(stranger.jwt, sell.id), 403, 'GATEWAY_DISPUTE_CROSS_MERCHANT');
    const response = await open(buyer.jwt, sell.id, {
      evidence_base64: slip.toString('base64'),
      content_type: 'image/png',
    });
    assert.equal(response.statusCode, 201, response.body);
    const dispute = response.json().data;
    assert.deepEqual(
      [dispute.opened_by, dispute.opened_by_merchant_id, dispute.merchant_id, dispute.kind, dispute.status],
      ['buyer', buyer.id, seller.id, 'merchant_dispute', 'opened'],
    );
    const evidence = await t.db
      .selectFrom('dispute_evidence')
      .selectAll()
      .where('dispute_id', '=', dispute.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual([evidence.content_type, Buffer.from(evidence.bytes).equals(slip)], ['image/png', true]);
    // one unresolved dispute per sell order: the seller's own is 409 while the buyer's is open
    expectError(await open(seller.jwt, sell.id), 409, 'DISPUTE_BAD_STATE');
    for (const party of [buyer, seller]) {
      const read = await merchantCall(t, party.jwt, 'GET', `/v1/merchant-disputes/${dispute.id}`);
      assert.equal(read.statusCode, 200, read.body);
      const listed = (await merchantCall(t, party.jwt, 'GET', '/v1/merchant-disputes')).json().data;
      assert.ok(listed.some((row: { id: string }) => row.id === dispute.id));
    }
    expectError(
      await merchantCall(t, stranger.jwt, 'GET', `/v1/merchant-disputes/${dispute.id}`),
      403,
      'GATEWAY_DISPUTE_CROSS_MERCHANT',
    );
    const events = await t.db
      .selectFrom('events')
      .select('merchant_id')
      .where('resource_id', '=', dispute.id)
      .where('type', '=', 'gateway.dispute.opened')
      .execute();
    assert.deepEqual(events.map((event) => event.merchant_id).sort(), [buyer.id, seller.id].sort());

    // While it is open the sweeper does not fail the cash leg, however long it has been in flight.
    t.clock.advance(72 * HOUR);
    await sweepSellOrders(t.application.payouts.sell_orders);
    assert.equal((await sellOrder(sell.id)).status, 'cash_leg_in_flight');
    // no_action lifts the hold; the next sweep fails it as usual
    const resolved = await resolve(dispute.id, 'no_action');
    assert.equal(resolved.resolution.ledger_effect, 'none');
    await sweepSellOrders(t.application.payouts.sell_orders);
    const failed = await sellOrder(sell.id);
    assert.deepEqual([failed.status, failed.failure_reason], ['failed', 'cash_leg_retry_exhausted']);
  });

  it('the seller opens one as opened_by seller; a buyer may not dispute a completed order (409)', async () => {
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, PAY);
    assert.equal((await confirm(sell.id)).json().data.status, 'completed');
    expectError(await open(buyer.jwt, sell.id), 409, 'DISPUTE_BAD_STATE');
    const response = await open(seller.jwt, sell.id);
    assert.equal(response.statusCode, 201, response.body);
    assert.deepEqual(
      [response.json().data.opened_by, response.json().data.opened_by_merchant_id],
      ['seller', seller.id],
    );
    assert.equal((await resolve(response.json().data.id, 'no_action')).resolution.ledger_effect, 'none');
  });

  it('in flight: favor_counterparty completes it as a confirmed cash leg; supply as before the match', async () => {
    const before_match = await circulation();
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, 3 * PAY);
    const dispute = (await open(buyer.jwt, sell.id)).json().data;
    const resolved = await resolve(dispute.id, 'favor_counterparty');
    assert.equal(resolved.resolution.ledger_effect, 'complete_cash_leg');
    const order = await sellOrder(sell.id);
    assert.equal(order.status, 'completed');
    const burn = await t.db
      .selectFrom('ledger_transfers')
      .selectAll()
      .where('key', '=', sell.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual([burn.kind, Number(burn.amount_micro_pay)], ['burn', 3 * PAY]);
    assert.equal(await circulation(), before_match);
    const balance = (await merchantCall(t, buyer.jwt, 'GET', `/v1/merchants/${buyer.id}/balance`)).json().data;
    assert.equal(balance.unconfirmed_fills_micro_pay, 0, "the buyer's fill is confirmed");
    assert.deepEqual(await reconciliationDifferences(t, { except_test_funding: true }), []);
  });

  it('in flight: favor_merchant fails it as a failed cash leg (the fill taken back, the reserve released); supply as before', async () => {
    const before_match = await circulation();
    const seller_before = await balancesOf(t, seller.id);
    const buyer_before = await balancesOf(t, buyer.id);
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, 4 * PAY);
    const dispute = (await open(seller.jwt, sell.id)).json().data;
    const resolved = await resolve(dispute.id, 'favor_merchant');
    assert.equal(resolved.resolution.ledger_effect, 'fail_cash_leg');
    const order = await sellOrder(sell.id);
    assert.deepEqual([order.status, order.failure_reason], ['failed', 'cash_leg_disputed']);
    assert.deepEqual(await balancesOf(t, seller.id), seller_before);
    assert.deepEqual(await balancesOf(t, buyer.id), buyer_before);
    assert.equal(await circulation(), before_match);
    assert.deepEqual(await reconciliationDifferences(t, { except_test_funding: true }), []);
  });

  it('completed: favor_merchant takes the fills back from the buyer to the seller; the other outcomes move nothing', async () => {
    const before_match = await circulation();
    const seller_before = await balancesOf(t, seller.id);
    const buyer_before = await balancesOf(t, buyer.id);
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, 5 * PAY);
    assert.equal((await confirm(sell.id)).json().data.status, 'completed');
    const first = (await open(seller.jwt, sell.id)).json().data;
    assert.equal((await resolve(first.id, 'favor_counterparty')).resolution.ledger_effect, 'none');
    assert.deepEqual((await balancesOf(t, seller.id)).available, seller_before.available - 5 * PAY);
    const second = (await open(seller.jwt, sell.id)).json().data;
    const resolved = await resolve(second.id, 'favor_merchant');
    assert.deepEqual(
      [resolved.resolution.ledger_effect, resolved.resolution.amount_micro_pay],
      ['return_to_seller', 5 * PAY],
    );
    assert.deepEqual(await balancesOf(t, seller.id), seller_before);
    assert.deepEqual(await balancesOf(t, buyer.id), buyer_before);
    assert.equal(await circulation(), before_match, 'no mint on one side');
    // a third dispute never moves PAY again
    const third = (await open(seller.jwt, sell.id)).json().data;
    assert.equal((await resolve(third.id, 'favor_merchant')).resolution.ledger_effect, 'none');
    assert.deepEqual(await reconciliationDifferences(t, { except_test_funding: true }), []);
  });

  it("failed: favor_counterparty gives the paid fills' PAY back from the seller to the buyer; favor_merchant nothing", async () => {
    const before_match = await circulation();
    const seller_before = await balancesOf(t, seller.id);
    const buyer_before = await balancesOf(t, buyer.id);
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, 6 * PAY);
    await failBySweep(sell.id);
    const first = (await open(buyer.jwt, sell.id)).json().data;
    assert.equal((await resolve(first.id, 'favor_merchant')).resolution.ledger_effect, 'none');
    assert.deepEqual(await balancesOf(t, buyer.id), buyer_before);
    const second = (await open(buyer.jwt, sell.id)).json().data;
    const resolved = await resolve(second.id, 'favor_counterparty');
    assert.deepEqual(
      [resolved.resolution.ledger_effect, resolved.resolution.amount_micro_pay],
      ['return_to_buyers', 6 * PAY],
    );
    assert.equal((await balancesOf(t, seller.id)).available, seller_before.available - 6 * PAY);
    assert.equal((await balancesOf(t, buyer.id)).available, buyer_before.available + 6 * PAY);
    assert.equal(await circulation(), before_match, 'no burn on one side');
    assert.deepEqual(await reconciliationDifferences(t, { except_test_funding: true }), []);
  });

  it('a side that spent the PAY owes it: the shortfall is shown and collected from its next credits, supply restored', async () => {
    const spender = await t.createMerchant('Spender');
    const before_match = await circulation();
    const sell = await inFlightSell(t, seller.jwt, spender.jwt, 7 * PAY);
    assert.equal((await confirm(sell.id)).json().data.status, 'completed');
    // the buyer cashes its confirmed PAY out: a sell order of its own reserves it
    const spent = await merchantCall(t, spender.jwt, 'POST', '/v1/merchant-sell-orders', {
      amount_micro_pay: 5 * PAY,
      currency: 'PAY',
      target_currency: 'THB',
      target_fiat_amount: 999_999,
      payout_destination: { rail: 'promptpay', promptpay_id: '0899999999' },
    });
    assert.equal(spent.statusCode, 201, spent.body);
    const seller_before = await balancesOf(t, seller.id);
    const dispute = (await open(seller.jwt, sell.id)).json().data;
    const resolved = await resolve(dispute.id, 'favor_merchant');
    assert.equal(resolved.resolution.ledger_effect, 'return_to_seller');
    assert.equal((await balancesOf(t, seller.id)).available, seller_before.available + 2 * PAY);
    const owed = (await merchantCall(t, spender.jwt, 'GET', `/v1/merchants/${spender.id}/balance`)).json().data;
    assert.deepEqual([owed.available_micro_pay, owed.shortfall_micro_pay], [0, 5 * PAY]);
    assert.ok(owed.deficit_micro_pay >= 5 * PAY);

    // An operator credit of 3 PAY: all of it pays the shortfall back to the seller before it is available.
    const credit = await t.request({
      method: 'POST',
      url: `/admin/merchants/${spender.id}/ledger-adjustments`,
      headers: { ...ADMIN_HEADERS, 'idempotency-key': randomUUID() },
      payload: { amount_micro_pay: 3 * PAY, direction: 'credit', reason: 'goodwill' },
    });
    assert.equal(credit.statusCode, 201, credit.body);
    assert.equal((await balancesOf(t, spender.id)).available, 0);
    assert.equal((await balancesOf(t, seller.id)).available, seller_before.available + 5 * PAY);
    // The reserve coming back (its sell order cancelled) pays the rest; the remainder is available.
    const cancelled = await merchantCall(
      t,
      spender.jwt,
      'POST',
      `/v1/merchant-sell-orders/${spent.json().data.id}/cancel`,
    );
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.equal((await balancesOf(t, seller.id)).available, seller_before.available + 7 * PAY);
    const settled = (await merchantCall(t, spender.jwt, 'GET', `/v1/merchants/${spender.id}/balance`)).json().data;
    assert.deepEqual([settled.available_micro_pay, settled.shortfall_micro_pay], [3 * PAY, 0]);
    // supply: before the match plus the operator's 3 PAY credit
    assert.equal(await circulation(), before_match + 3 * PAY);
    const collections = await t.db.selectFrom('pay_shortfall_collections').selectAll().execute();
    assert.equal(collections.length, 2);
    assert.deepEqual(await reconciliationDifferences(t, { except_test_funding: true }), []);
  });

  it("a failed cash leg's reversal after the buyer spent: the shortfall is collected from its next fill and burned", async () => {
    const spender = await t.createMerchant('Reversal Spender');
    const before_match = await circulation();
    const sell = await inFlightSell(t, seller.jwt, spender.jwt, 4 * PAY);
    // a debit before the reversal: the buyer pays 3 of its 4 PAY to somebody else
    await t.application.ledger.transfer({
      key: `test-fund:spend:${randomUUID()}`,
      kind: 'transfer',
      debit_account: accounts.merchantAvailable(spender.id, false),
      credit_account: accounts.merchantAvailable(stranger.id, false),
      amount_micro_pay: 3 * PAY,
    });
    await failBySweep(sell.id);
    const owed = (await merchantCall(t, spender.jwt, 'GET', `/v1/merchants/${spender.id}/balance`)).json().data;
    assert.deepEqual([owed.available_micro_pay, owed.shortfall_micro_pay], [0, 3 * PAY]);
    // its next fill (a buy of 5 PAY) pays the 3 PAY back: burned to the mint source
    const next = await inFlightSell(t, seller.jwt, spender.jwt, 5 * PAY);
    assert.equal((await balancesOf(t, spender.id)).available, 2 * PAY);
    const after = (await merchantCall(t, spender.jwt, 'GET', `/v1/merchants/${spender.id}/balance`)).json().data;
    assert.equal(after.shortfall_micro_pay, 0);
    const burned = await t.db
      .selectFrom('ledger_transfers')
      .selectAll()
      .where('key', 'like', 'shortfall:%')
      .where('debit_account', '=', accounts.merchantAvailable(spender.id, false))
      .execute();
    assert.deepEqual(
      burned.map((row) => [row.kind, row.credit_account, Number(row.amount_micro_pay)]),
      [['burn', accounts.mintSource(MINT_SOURCE, false), 3 * PAY]],
    );
    // supply: before the match plus the new fill in flight; the 3 PAY spent are backed again by the 3 collected
    assert.equal(await circulation(), before_match + 5 * PAY);
    assert.ok(next.id);
    assert.deepEqual(await reconciliationDifferences(t, { except_test_funding: true }), []);
  });
});
