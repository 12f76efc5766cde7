import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { accounts } from '../../src/modules/ledger/port.ts';
import { runMatcher } from '../../src/modules/payouts/matcher.ts';
import { sweepRefunds } from '../../src/modules/refunds/sweep.ts';
import { sweepSellOrders } from '../../src/modules/sell-orders/close.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import {
  buyBody,
  createBuy,
  createSell,
  eventTypes,
  expectError,
  fund,
  matchAndInstruct,
  merchantCall,
  MINT_SOURCE,
  receipt,
  scriptedValidator,
  sellBody,
  reconciliationDifferences,
} from '../helpers/orders.ts';
import { addUser, type Browser, signIn } from '../dashboard/helpers.ts';
import { completedPayments } from '../helpers/payments.ts';

const BUYER_DESTINATION = { rail: 'promptpay', promptpay_id: '0899999999' };
const HOUR_MS = 3600_000;

interface RefundData {
  id: string;
  status: string;
  amount: number;
  amount_micro_pay: number;
  sell_order_id: string | null;
  claim_url: string;
  failure_reason: string | null;
  receipt_url: string | null;
}

/**
 * A refund from the merchant's PAY is paid out through the payout network (DESIGN 3c "Who pays a refund"): once its
 * destination is known it is a sell order paying the buyer, funded from the refund hold, matched like any other, its
 * cash leg vouched for by the buyer (the payee); it succeeds when the order completes and gives the PAY back when the
 * order fails or the refund is canceled before a fill.
 */
describe('refunds: pay_balance refunds paid out as sell orders', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let payer: TestMerchant;
  let owner: Browser;
  let order_seq = 0;

  before(async () => {
    t = await startTestApp({ env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE } });
    merchant = await t.createMerchant('Refunding shop');
    payer = await t.createMerchant('PAY buyer');
    await t.createSeller(thbSeller());
    await addUser(t, merchant.id, 'owner@refunding.example', 'owner');
    owner = await signIn(t, 'owner@refunding.example');
  });
  after(() => t.close());

  const ledgerOf = async (merchant_id: string) => {
    const ledger = t.application.ledger;
    return {
      available: await ledger.balance(accounts.merchantAvailable(merchant_id, false)),
      reserve: await ledger.balance(accounts.merchantReserve(merchant_id, false)),
      hold: await ledger.balance(accounts.merchantRefundHold(merchant_id, false)),
    };
  };

  async function paidPayment(amount = 10_000): Promise<string> {
    order_seq += 1;
    const [id] = await completedPayments(t, merchant.live, [{ order_id: `pay-balance-payout-${order_seq}`, amount }]);
    return id!;
  }

  async function refund(payment_id: string, body: object): Promise<RefundData> {
    const response = await t.request({
      method: 'POST',
      url: `/v1/payments/${payment_id}/refunds`,
      headers: { 'x-api-key': merchant.live, 'idempotency-key': randomUUID() },
      payload: { funding: 'pay_balance', ...body },
    });
    assert.equal(response.statusCode, 201, response.body);
    return response.json().data;
  }

  const readRefund = async (id: string): Promise<RefundData> =>
    (await t.call('GET', `/v1/refunds/${id}`, merchant.live)).json().data;
  const readSell = async (id: string) =>
    (await merchantCall(t, merchant.jwt, 'GET', `/v1/merchant-sell-orders/${id}`)).json().data;
  const claimPost = (claim_url: string, form: Record<string, string>) =>
    t.request({
      method: 'POST',
      url: new URL(claim_url).pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(form).toString(),
    });
  const fillsOf = (sell_order_id: string) =>
    t.db.selectFrom('order_fills').selectAll().where('sell_order_id', '=', sell_order_id).execute();

  it('a destination given at create: a sell order from the hold, matched, confirmed by the buyer, the refund succeeds', async () => {
    const payment_id = await paidPayment();
    const merchant_before = await ledgerOf(merchant.id);
    const payer_before = await ledgerOf(payer.id);

    const created = await refund(payment_id, { amount: 4_000, destination: BUYER_DESTINATION });
    const hold = created.amount_micro_pay;
    assert.equal(created.status, 'pending');
    assert.ok(created.sell_order_id, 'the refund names its sell order');
    // One posting: the hold moved into the order's reserve; nothing left in the hold, nothing taken twice.
    assert.deepEqual(await ledgerOf(merchant.id), {
      available: merchant_before.available - hold,
      reserve: merchant_before.reserve + hold,
      hold: 0,
    });
    const sell = await readSell(created.sell_order_id);
    assert.deepEqual(
      [sell.status, sell.amount_micro_pay, sell.target_currency, sell.target_fiat_amount, sell.payout_destination],
      ['pending', hold, 'THB', 4_000, BUYER_DESTINATION],
    );
    assert.deepEqual(await reconciliationDifferences(t), []);
    // The dashboard offers what the server allows: an unfilled refund payout can be cancelled.
    const pending_page = (await owner.get('/dashboard/balance?lang=en')).body;
    assert.match(pending_page, new RegExp(`action="/dashboard/sell-orders/${created.sell_order_id}/cancel"`));

    // The buyer of PAY bids the refund's price and is matched FIFO like against any sell order.
    const buy = await createBuy(t, payer.jwt, buyBody(hold, 'THB', 4_000));
    assert.equal(await matchAndInstruct(t), 1);
    assert.equal((await readSell(created.sell_order_id)).status, 'cash_leg_in_flight');
    const [fill] = await fillsOf(created.sell_order_id);
    assert.deepEqual(
      [fill?.buy_order_id, Number(fill?.amount_micro_pay), Number(fill?.fiat_amount), fill?.confirmed_at],
      [buy.id, hold, 4_000, null],
    );
    assert.equal((await ledgerOf(payer.id)).available, payer_before.available + hold);
    const claim = await t.request({ method: 'GET', url: `${new URL(created.claim_url).pathname}?lang=en` });
    assert.match(claim.body, /data-stage="confirm"/);
    // The buyer is told who pays: the network's payers, not the merchant's own transfer.
    assert.match(claim.body, /is being paid to .* by our payment partners/);
    assert.doesNotMatch(claim.body, /says it sent/);

    // The merchant is not the payee: its own slip, unchecked by a provider, does not confirm the cash leg.
    const own_slip = await merchantCall(
      t,
      merchant.jwt,
      'POST',
      `/v1/merchant-sell-orders/${created.sell_order_id}/confirm-cash-leg`,
      {
        receipt_base64: receipt(),
        content_type: 'application/pdf',
      },
    );
    expectError(own_slip, 409, 'SELL_ORDER_BAD_STATE');
    assert.equal((await readSell(created.sell_order_id)).status, 'cash_leg_in_flight');
    // ... so the dashboard shows no form for it (nor a cancel, the order being filled), but who confirms instead.
    const in_flight_page = (await owner.get('/dashboard/balance?lang=en')).body;
    assert.doesNotMatch(in_flight_page, new RegExp(`/dashboard/sell-orders/${created.sell_order_id}/(confirm|cancel)`));
    assert.match(in_flight_page, /the refund&#39;s buyer confirms on their claim page/);

    const received = await claimPost(created.claim_url, { action: 'received' });
    assert.ok([200, 303].includes(received.statusCode), received.body);
    const done = await readRefund(created.id);
    assert.equal(done.status, 'succeeded');
    assert.match(done.receipt_url ?? '', /\/receipts\/[A-Za-z0-9]+$/);
    assert.equal((await readSell(created.sell_order_id)).status, 'completed');
    const [confirmed] = await fillsOf(created.sell_order_id);
    assert.notEqual(confirmed?.confirmed_at, null);
    // The merchant paid exactly the hold; the payer keeps exactly what it bought.
    assert.deepEqual(await ledgerOf(merchant.id), {
      available: merchant_before.available - hold,
      reserve: merchant_before.reserve,
      hold: 0,
    });
    assert.equal((await ledgerOf(payer.id)).available, payer_before.available + hold);
    const payment = (await t.call('GET', `/v1/payments/${payment_id}`, merchant.live)).json().data;
    assert.deepEqual([payment.amount_refunded, payment.refunded], [4_000, false]);
    assert.deepEqual(await eventTypes(t, created.id), ['refund.created', 'refund.updated', 'refund.succeeded']);
    assert.deepEqual(await eventTypes(t, created.sell_order_id), [
      'sell_order.cash_leg_requested',
      'sell_order.completed',
    ]);
    // The buyer vouched for the payout: the refunding merchant cannot dispute it back to itself.
    const dispute = await merchantCall(t, merchant.jwt, 'POST', '/v1/merchant-disputes', {
      sell_order_id: created.sell_order_id,
      notes: 'the buyer was not paid after all',
    });
    expectError(dispute, 409, 'DISPUTE_BAD_STATE');
    assert.equal(
      (await t.db.selectFrom('disputes').select('id').where('sell_order_id', '=', created.sell_order_id).execute())
        .length,
      0,
    );
    assert.deepEqual(await reconciliationDifferences(t), []);
  });

  it('a destination claimed later on the claim page: the sell order is made then; paid in full, payment.refunded', async () => {
    const payment_id = await paidPayment();
    const merchant_before = await ledgerOf(merchant.id);
    const first = await refund(payment_id, { amount: 9_000, destination: BUYER_DESTINATION });
    // The rest of the payment, without a destination: the buyer names it on the claim page.
    const created = await refund(payment_id, {});
    assert.deepEqual([created.status, created.sell_order_id, created.amount], ['requires_action', null, 1_000]);
    const claimed = await claimPost(created.claim_url, {
      action: 'destination',
      rail: 'promptpay',
      promptpay_id: '0811111111',
    });
    assert.ok([200, 303].includes(claimed.statusCode), claimed.body);
    const pending = await readRefund(created.id);
    assert.equal(pending.status, 'pending');
    assert.ok(pending.sell_order_id);
    const sell = await readSell(pending.sell_order_id);
    assert.deepEqual(
      [sell.amount_micro_pay, sell.target_fiat_amount, sell.payout_destination],
      [created.amount_micro_pay, 1_000, { rail: 'promptpay', promptpay_id: '0811111111' }],
    );

    // One buy order fills both refunds' sell orders (oldest first), one fill each.
    const total = first.amount_micro_pay + created.amount_micro_pay;
    await createBuy(t, payer.jwt, buyBody(total, 'THB', 10_100));
    assert.equal(await matchAndInstruct(t), 2);
    for (const one of [first, pending]) {
      const answer = await claimPost(one.claim_url, { action: 'received' });
      assert.ok([200, 303].includes(answer.statusCode), answer.body);
      assert.equal((await readRefund(one.id)).status, 'succeeded');
    }
    const refunded = await t.event<{ data: { refunded: boolean; amount_refunded: number } }>(
      payment_id,
      'payment.refunded',
    );
    assert.deepEqual([refunded.data.refunded, refunded.data.amount_refunded], [true, 10_000]);
    assert.deepEqual(await ledgerOf(merchant.id), {
      available: merchant_before.available - total,
      reserve: merchant_before.reserve,
      hold: 0,
    });
    assert.deepEqual(await reconciliationDifferences(t), []);
  });

  it('a failed cash leg fails the refund and gives the PAY back; the payer’s fill is taken back', async () => {
    const payment_id = await paidPayment();
    const merchant_before = await ledgerOf(merchant.id);
    const payer_before = await ledgerOf(payer.id);
    const created = await refund(payment_id, { amount: 2_500, destination: BUYER_DESTINATION });
    assert.ok(created.sell_order_id);
    await createBuy(t, payer.jwt, buyBody(created.amount_micro_pay, 'THB', 2_500));
    assert.equal(await matchAndInstruct(t), 1);

    // After a fill the money is on its way: no cancel, neither of the refund nor of its sell order.
    expectError(await t.call('POST', `/v1/refunds/${created.id}/cancel`, merchant.live), 409, 'REFUND_BAD_STATE');
    expectError(
      await merchantCall(t, merchant.jwt, 'POST', `/v1/merchant-sell-orders/${created.sell_order_id}/cancel`),
      409,
      'SELL_ORDER_BAD_STATE',
    );
    // The buyer says nothing arrived: still pending, with the reason, and the page asks again.
    const denied = await claimPost(created.claim_url, { action: 'not_received' });
    assert.ok([200, 303].includes(denied.statusCode), denied.body);
    const waiting = await readRefund(created.id);
    assert.deepEqual([waiting.status, waiting.failure_reason], ['pending', 'buyer_not_received']);

    t.clock.advance(49 * HOUR_MS);
    assert.equal(await sweepSellOrders(t.application.payouts.sell_orders), 1);
    const failed = await readRefund(created.id);
    assert.deepEqual([failed.status, failed.failure_reason], ['failed', 'cash_leg_retry_exhausted']);
    assert.equal((await readSell(created.sell_order_id)).status, 'failed');
    assert.deepEqual(await ledgerOf(merchant.id), merchant_before);
    assert.equal((await ledgerOf(payer.id)).available, payer_before.available);
    const [fill] = await fillsOf(created.sell_order_id);
    assert.deepEqual(
      [Number(fill?.reversed_micro_pay), Number(fill?.shortfall_micro_pay)],
      [created.amount_micro_pay, 0],
    );
    assert.deepEqual((await eventTypes(t, created.id)).slice(-2), ['refund.updated', 'refund.failed']);
    const payment = (await t.call('GET', `/v1/payments/${payment_id}`, merchant.live)).json().data;
    assert.equal(payment.amount_refunded, 0);
    // An ended refund has nothing for the buyer to confirm.
    assert.equal((await claimPost(created.claim_url, { action: 'received' })).statusCode, 409);
    assert.deepEqual(await reconciliationDifferences(t), []);
  });

  it('cancel before any fill cancels the sell order and gives the PAY back', async () => {
    const payment_id = await paidPayment();
    const merchant_before = await ledgerOf(merchant.id);
    const created = await refund(payment_id, { amount: 3_000, destination: BUYER_DESTINATION });
    assert.ok(created.sell_order_id);
    const canceled = await t.call('POST', `/v1/refunds/${created.id}/cancel`, merchant.live);
    assert.equal(canceled.statusCode, 200, canceled.body);
    assert.equal(canceled.json().data.status, 'canceled');
    const sell = await readSell(created.sell_order_id);
    assert.deepEqual([sell.status, sell.failure_reason], ['failed', 'cancelled_by_merchant']);
    assert.deepEqual(await ledgerOf(merchant.id), merchant_before);
    assert.deepEqual(await eventTypes(t, created.id), ['refund.created', 'refund.updated', 'refund.canceled']);
    assert.deepEqual(await eventTypes(t, created.sell_order_id), ['sell_order.failed']);

    // The merchant cancelling the refund's sell order itself cancels the refund the same way.
    const other = await refund(payment_id, { amount: 3_000, destination: BUYER_DESTINATION });
    const by_order = await merchantCall(
      t,
      merchant.jwt,
      'POST',
      `/v1/merchant-sell-orders/${other.sell_order_id}/cancel`,
    );
    assert.equal(by_order.statusCode, 200, by_order.body);
    assert.equal((await readRefund(other.id)).status, 'canceled');
    assert.deepEqual(await ledgerOf(merchant.id), merchant_before);
    assert.deepEqual(await reconciliationDifferences(t), []);

    // Reconciliation checks the order against the refund from the rows: an order selling more than the hold is listed.
    await t.db
      .updateTable('sell_orders')
      .set({ amount_micro_pay: other.amount_micro_pay + 1 })
      .where('id', '=', other.sell_order_id)
      .execute();
    const keys = (await reconciliationDifferences(t)).map((difference) => difference.key);
    assert.ok(keys.includes(`identity:refund_payout:${other.id}`), keys.join(', '));
    await t.db
      .updateTable('sell_orders')
      .set({ amount_micro_pay: other.amount_micro_pay })
      .where('id', '=', other.sell_order_id)
      .execute();
    assert.deepEqual(await reconciliationDifferences(t), []);
  });

  it('a dispute resolved for the payer completes the order; the refunds sweep makes the refund follow it', async () => {
    const payment_id = await paidPayment();
    const created = await refund(payment_id, { amount: 1_500, destination: BUYER_DESTINATION });
    await createBuy(t, payer.jwt, buyBody(created.amount_micro_pay, 'THB', 1_500));
    assert.equal(await matchAndInstruct(t), 1);
    const opened = await merchantCall(t, payer.jwt, 'POST', '/v1/merchant-disputes', {
      sell_order_id: created.sell_order_id,
      notes: 'I paid the buyer',
    });
    assert.equal(opened.statusCode, 201, opened.body);
    const dispute_id = opened.json().data.id;
    assert.equal((await t.admin('POST', `/admin/disputes/${dispute_id}/investigate`, {})).statusCode, 200);
    const resolved = await t.admin('POST', `/admin/disputes/${dispute_id}/resolve`, { outcome: 'favor_counterparty' });
    assert.equal(resolved.statusCode, 200, resolved.body);
    assert.equal((await readSell(created.sell_order_id ?? '')).status, 'completed');
    assert.equal((await readRefund(created.id)).status, 'pending');
    assert.equal(await sweepRefunds(t.application.refunds), 1);
    assert.equal((await readRefund(created.id)).status, 'succeeded');
    assert.equal(await sweepRefunds(t.application.refunds), 0);
    assert.deepEqual(await reconciliationDifferences(t), []);
  });

  it('cancel racing the matcher ends in one state: canceled with no fill, or filled with the cancel refused', async () => {
    const outcomes = new Set<string>();
    for (let round = 0; round < 4; round += 1) {
      const payment_id = await paidPayment();
      const merchant_before = await ledgerOf(merchant.id);
      const payer_before = await ledgerOf(payer.id);
      const created = await refund(payment_id, { amount: 5_000, destination: BUYER_DESTINATION });
      const hold = created.amount_micro_pay;
      const buy = await createBuy(t, payer.jwt, buyBody(hold, 'THB', 5_000));
      const [cancel] = await Promise.all([
        t.call('POST', `/v1/refunds/${created.id}/cancel`, merchant.live),
        runMatcher(t.application.payouts.matcher),
      ]);
      const after_refund = await readRefund(created.id);
      const sell = await readSell(created.sell_order_id ?? '');
      const fills = await fillsOf(created.sell_order_id ?? '');
      if (cancel.statusCode === 200) {
        outcomes.add('canceled');
        assert.deepEqual([after_refund.status, sell.status, fills.length], ['canceled', 'failed', 0]);
        assert.deepEqual(await ledgerOf(merchant.id), merchant_before);
        assert.equal((await ledgerOf(payer.id)).available, payer_before.available);
        // The buy order is still waiting: cancel it so the next round starts clean.
        await merchantCall(t, payer.jwt, 'POST', `/v1/merchant-buy-orders/${buy.id}/cancel`);
      } else {
        outcomes.add('filled');
        expectError(cancel, 409, 'REFUND_BAD_STATE');
        assert.equal(after_refund.status, 'pending');
        assert.equal(fills.length, 1);
        assert.deepEqual(await ledgerOf(merchant.id), {
          available: merchant_before.available - hold,
          reserve: merchant_before.reserve + hold,
          hold: 0,
        });
        assert.equal((await ledgerOf(payer.id)).available, payer_before.available + hold);
        await matchAndInstruct(t);
        await claimPost(created.claim_url, { action: 'received' });
        assert.equal((await readRefund(created.id)).status, 'succeeded');
      }
      // PAY conserved, nothing released twice: the journal is what the rows imply.
      assert.deepEqual(await reconciliationDifferences(t), []);
    }
    assert.ok(outcomes.size >= 1);
  });

  it('a hold takes only PAY the merchant may cash out: not PAY from fills whose cash leg is unconfirmed (409)', async () => {
    const shop = await t.createMerchant('Shop that bought PAY');
    const [payment_id] = await completedPayments(t, shop.live, [{ order_id: 'unconfirmed-1', amount: 10_000 }]);
    const payment = (await t.call('GET', `/v1/payments/${payment_id}`, shop.live)).json().data;
    // The whole payment's PAY before its fee: more than the shop holds from it, by the fee.
    const whole_hold = payment.match_details.reduce(
      (sum: number, leg: { amount_micro_pay: number }) => sum + leg.amount_micro_pay,
      0,
    );
    // The shop buys PAY from another merchant's sell order; its cash leg is not confirmed yet.
    await fund(t, payer.id, whole_hold);
    await createSell(t, payer.jwt, sellBody(whole_hold, 'THB', 1));
    await createBuy(t, shop.jwt, buyBody(whole_hold, 'THB', 1));
    assert.equal(await matchAndInstruct(t), 1);
    const before_refund = await ledgerOf(shop.id);
    assert.ok(before_refund.available >= whole_hold, 'the ledger alone would cover the hold');
    const refused = await t.request({
      method: 'POST',
      url: `/v1/payments/${payment_id}/refunds`,
      headers: { 'x-api-key': shop.live, 'idempotency-key': randomUUID() },
      payload: { funding: 'pay_balance', destination: BUYER_DESTINATION },
    });
    expectError(refused, 409, 'REFUND_INSUFFICIENT_BALANCE');
    assert.deepEqual(await ledgerOf(shop.id), before_refund);
    assert.deepEqual((await t.call('GET', `/v1/refunds?payment_id=${payment_id}`, shop.live)).json().data, []);
    assert.deepEqual(await reconciliationDifferences(t, { except_test_funding: true }), []);
  });

  // last: its order stays partly filled, which a later buy in this app would match first
  it('partly filled, a refund payout stays pending without its cancel: the page offers none, the server refuses it', async () => {
    const payment_id = await paidPayment();
    const created = await refund(payment_id, { amount: 4_000, destination: BUYER_DESTINATION });
    assert.ok(created.sell_order_id);
    const part = Math.floor(created.amount_micro_pay / 2);
    await createBuy(t, payer.jwt, buyBody(part, 'THB', 2_000));
    assert.equal(await matchAndInstruct(t), 1);
    assert.equal((await fillsOf(created.sell_order_id)).length, 1, 'the buy filled this refund payout');
    const sell = await readSell(created.sell_order_id);
    assert.deepEqual([sell.status, Number(sell.filled_micro_pay)], ['pending', part]);

    // signed in afresh: an earlier test moved the clock past the first session's end
    const balance = await (await signIn(t, 'owner@refunding.example')).get('/dashboard/balance?lang=en');
    assert.equal(balance.statusCode, 200);
    assert.ok(balance.body.includes(created.sell_order_id), 'the page lists the refund payout');
    assert.doesNotMatch(balance.body, new RegExp(`/dashboard/sell-orders/${created.sell_order_id}/cancel`));
    expectError(
      await merchantCall(t, merchant.jwt, 'POST', `/v1/merchant-sell-orders/${created.sell_order_id}/cancel`),
      409,
      'SELL_ORDER_BAD_STATE',
    );
    assert.equal((await readSell(created.sell_order_id)).status, 'pending');
  });
});

/** Where a provider checks slips, the payer's slip of the transfer to the buyer confirms the refund's cash leg. */
describe('refunds: a pay_balance payout confirmed by a provider-checked slip', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let payer: TestMerchant;
  const validator = scriptedValidator();

  before(async () => {
    t = await startTestApp({ env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE }, overrides: { validator } });
    merchant = await t.createMerchant('Refunding shop');
    payer = await t.createMerchant('PAY buyer');
    await t.createSeller(thbSeller());
  });
  after(() => t.close());

  it("checks the slip against the buyer's destination and the fill's amount; verified, the refund succeeds", async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'provider-1', amount: 10_000 }]);
    const created = await t.request({
      method: 'POST',
      url: `/v1/payments/${payment_id}/refunds`,
      headers: { 'x-api-key': merchant.live, 'idempotency-key': randomUUID() },
      payload: { funding: 'pay_balance', amount: 6_000, destination: BUYER_DESTINATION },
    });
    assert.equal(created.statusCode, 201, created.body);
    const refund = created.json().data as RefundData;
    assert.ok(refund.sell_order_id);
    await createBuy(t, payer.jwt, buyBody(refund.amount_micro_pay, 'THB', 6_000));
    assert.equal(await matchAndInstruct(t), 1);

    // A slip the provider refuses is not counted against the payout (its merchant, not its payee, sent it): 409.
    validator.next.push('failed');
    const url = `/v1/merchant-sell-orders/${refund.sell_order_id}/confirm-cash-leg`;
    const refused = await merchantCall(t, merchant.jwt, 'POST', url, {
      receipt_base64: receipt(),
      content_type: 'application/pdf',
    });
    expectError(refused, 409, 'SELL_ORDER_BAD_STATE');
    const slip = await merchantCall(t, merchant.jwt, 'POST', url, {
      receipt_base64: receipt(),
      content_type: 'application/pdf',
    });
    assert.equal(slip.statusCode, 200, slip.body);
    assert.equal(slip.json().data.status, 'completed');
    const check = validator.checks.at(-1);
    assert.deepEqual([check?.expected_amount_minor, check?.currency], [6_000, 'THB']);
    assert.match(JSON.stringify(check?.receiver), /0899999999/);
    const done = (await t.call('GET', `/v1/refunds/${refund.id}`, merchant.live)).json().data;
    assert.equal(done.status, 'succeeded');
    assert.deepEqual(await reconciliationDifferences(t), []);
  });
});
