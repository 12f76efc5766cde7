import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { fillReference } from '../../src/modules/buy-orders/present.ts';
import { runMatcher } from '../../src/modules/payouts/matcher.ts';
import { sweepSellOrders } from '../../src/modules/sell-orders/close.ts';
import { promptpayPayload, qrPng } from '../../src/modules/reference/promptpay.ts';
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
import { startFakeEasySlip } from '../validators/fake-easyslip.ts';

interface Fill {
  number: number;
  sell_order_id: string;
  amount_micro_pay: number;
  fiat_currency: string;
  fiat_amount: number;
  reference: string;
  pay_to: { display_name: string; destination: Record<string, string> } | null;
  promptpay_payload: string | null;
  qr_url: string | null;
  created_at: string;
}

const PROMPTPAY = { rail: 'promptpay', promptpay_id: '0812345678' };
const THAI_BANK = { rail: 'thai_bank', bank_code: '004', account_number: '0000056780', account_name: 'Bank Seller Co' };

/** The buyer pays the seller: each fill tells the buyer whom to pay, how much and with which reference. */
describe('payouts: the buyer is told whom to pay', () => {
  let t: TestApp;
  let seller: TestMerchant;
  let bank_seller: TestMerchant;
  let buyer: TestMerchant;

  before(async () => {
    t = await startTestApp({ env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE } });
    seller = await t.createMerchant('PromptPay Seller');
    bank_seller = await t.createMerchant('Bank Seller');
    buyer = await t.createMerchant('Buyer');
    await fund(t, seller.id, 100 * PAY);
    await fund(t, bank_seller.id, 100 * PAY);
  });
  after(() => t.close());

  it("a buy filled by two sellers: view and buy_order.matched carry each fill's payee, amount, reference and QR", async () => {
    const s1 = await createSell(t, seller.jwt, sellBody(4 * PAY, 'THB', 14_000, PROMPTPAY));
    t.clock.advance(1_000);
    const s2 = await createSell(t, bank_seller.jwt, sellBody(6 * PAY, 'THB', 21_000, THAI_BANK));
    const buy = await createBuy(t, buyer.jwt, buyBody(10 * PAY, 'THB', 35_000));
    assert.equal(await matchAndInstruct(t), 2);

    const view = (await merchantCall(t, buyer.jwt, 'GET', `/v1/merchant-buy-orders/${buy.id}`)).json().data;
    assert.equal(view.status, 'matched');
    const fills = view.fills as Fill[];
    const ids = await t.db
      .selectFrom('order_fills')
      .select(['id', 'sell_order_id'])
      .where('buy_order_id', '=', buy.id)
      .execute();
    const reference = (sell_order_id: string) =>
      fillReference(ids.find((row) => row.sell_order_id === sell_order_id)!.id);
    assert.deepEqual(fills, [
      {
        number: 1,
        sell_order_id: s1.id,
        amount_micro_pay: 4 * PAY,
        fiat_currency: 'THB',
        fiat_amount: 14_000,
        reference: reference(s1.id),
        pay_to: { display_name: 'PromptPay Seller', destination: PROMPTPAY },
        promptpay_payload: promptpayPayload('0812345678', 14_000),
        qr_url: `/v1/merchant-buy-orders/${buy.id}/fills/1/qr.png`,
        created_at: fills[0]!.created_at,
      },
      {
        number: 2,
        sell_order_id: s2.id,
        amount_micro_pay: 6 * PAY,
        fiat_currency: 'THB',
        fiat_amount: 21_000,
        reference: reference(s2.id),
        pay_to: { display_name: 'Bank Seller', destination: { ...THAI_BANK, bank_name: 'Kasikornbank' } },
        promptpay_payload: null,
        qr_url: null,
        created_at: fills[1]!.created_at,
      },
    ]);
    assert.match(fills[0]!.reference, /^PAY[0-9A-F]{9}$/);
    assert.notEqual(fills[0]!.reference, fills[1]!.reference);
    assert.equal(
      fills.reduce((sum, fill) => sum + fill.fiat_amount, 0),
      view.filled_fiat_amount,
    );

    // The webhook says the same.
    const event = await t.event<{ data: { fills: Fill[] } }>(buy.id, 'buy_order.matched');
    assert.deepEqual(event.data.fills, fills);
    // The list shows them too.
    const listed = (await merchantCall(t, buyer.jwt, 'GET', '/v1/merchant-buy-orders')).json().data as {
      id: string;
      fills: Fill[];
    }[];
    assert.deepEqual(listed.find((order) => order.id === buy.id)!.fills, fills);

    // The QR: a PNG of exactly that payload, for the buyer only.
    const qr = await merchantCall(t, buyer.jwt, 'GET', fills[0]!.qr_url!);
    assert.equal(qr.statusCode, 200);
    assert.equal(qr.headers['content-type'], 'image/png');
    assert.deepEqual(qr.rawPayload, await qrPng(promptpayPayload('0812345678', 14_000)));
    expectError(
      await merchantCall(t, buyer.jwt, 'GET', `/v1/merchant-buy-orders/${buy.id}/fills/2/qr.png`),
      404,
      'NOT_FOUND',
    );
    expectError(
      await merchantCall(t, buyer.jwt, 'GET', `/v1/merchant-buy-orders/${buy.id}/fills/3/qr.png`),
      404,
      'NOT_FOUND',
    );
    expectError(await merchantCall(t, seller.jwt, 'GET', fills[0]!.qr_url!), 403, 'FORBIDDEN');
    expectError(await merchantCall(t, null, 'GET', fills[0]!.qr_url!), 401, 'UNAUTHORIZED');
    expectError(
      await merchantCall(t, buyer.jwt, 'GET', `/v1/merchant-buy-orders/${randomUUID()}/fills/1/qr.png`),
      404,
      'NOT_FOUND',
    );

    // Each seller is told what to expect: the buyer's transfer, its reference, into its own destination.
    for (const [sell, destination, fiat_amount] of [
      [s1, PROMPTPAY, 14_000],
      [s2, { ...THAI_BANK, bank_name: 'Kasikornbank' }, 21_000],
    ] as const) {
      const requested = await t.db
        .selectFrom('events')
        .select('payload')
        .where('resource_id', '=', sell.id)
        .where('type', '=', 'sell_order.cash_leg_requested')
        .executeTakeFirstOrThrow();
      const cash_leg = (requested.payload as { data: { cash_leg: Record<string, unknown> } }).data.cash_leg;
      assert.equal(cash_leg['direction'], 'buyers_pay_you');
      assert.deepEqual(cash_leg['to'], destination);
      assert.deepEqual(cash_leg['fills'], [
        {
          buy_order_id: buy.id,
          payer_name: 'Buyer',
          reference: reference(sell.id),
          amount_micro_pay: sell.amount_micro_pay,
          fiat_amount,
        },
      ]);
    }
  });

  it('fills made in later passes number on from the earlier ones', async () => {
    const buy = await createBuy(t, buyer.jwt, buyBody(5 * PAY, 'THB', 17_500));
    await createSell(t, seller.jwt, sellBody(2 * PAY, 'THB', 7_000, PROMPTPAY));
    assert.equal(await matchAndInstruct(t), 1);
    const partial = (await merchantCall(t, buyer.jwt, 'GET', `/v1/merchant-buy-orders/${buy.id}`)).json().data;
    assert.deepEqual([partial.status, partial.fills.map((fill: Fill) => fill.number)], ['pending', [1]]);
    const event = await t.db
      .selectFrom('events')
      .select('payload')
      .where('resource_id', '=', buy.id)
      .where('type', '=', 'buy_order.partially_filled')
      .executeTakeFirstOrThrow();
    assert.deepEqual((event.payload as { data: { fills: Fill[] } }).data.fills, partial.fills);
    await createSell(t, bank_seller.jwt, sellBody(3 * PAY, 'THB', 10_500, THAI_BANK));
    assert.equal(await matchAndInstruct(t), 1);
    const done = (await merchantCall(t, buyer.jwt, 'GET', `/v1/merchant-buy-orders/${buy.id}`)).json().data;
    assert.deepEqual(
      [done.status, done.fills.map((fill: Fill) => [fill.number, fill.fiat_amount, fill.pay_to?.display_name])],
      [
        'matched',
        [
          [1, 7_000, 'PromptPay Seller'],
          [2, 10_500, 'Bank Seller'],
        ],
      ],
    );
  });
});

describe('payouts: a merchant never buys its own PAY', () => {
  let t: TestApp;
  const merchants: TestMerchant[] = [];

  before(async () => {
    t = await startTestApp({ env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE } });
    for (const name of ['A', 'B', 'C']) {
      const m = await t.createMerchant(name);
      await fund(t, m.id, 1_000 * PAY);
      merchants.push(m);
    }
  });
  after(() => t.close());

  it('its buy skips its own sell and fills from the next seller', async () => {
    const [a, b] = merchants as [TestMerchant, TestMerchant];
    const own = await createSell(t, a.jwt, sellBody(2 * PAY, 'AUD', 100));
    const buy = await createBuy(t, a.jwt, buyBody(2 * PAY, 'AUD', 1_000));
    assert.equal(await matchAndInstruct(t), 0);
    assert.equal(
      (await merchantCall(t, a.jwt, 'GET', `/v1/merchant-buy-orders/${buy.id}`)).json().data.status,
      'pending',
    );
    const other = await createSell(t, b.jwt, sellBody(2 * PAY, 'AUD', 200));
    assert.equal(await matchAndInstruct(t), 1);
    const view = (await merchantCall(t, a.jwt, 'GET', `/v1/merchant-buy-orders/${buy.id}`)).json().data;
    assert.deepEqual([view.status, view.fills.map((fill: Fill) => fill.sell_order_id)], ['matched', [other.id]]);
    assert.equal(
      (await merchantCall(t, a.jwt, 'GET', `/v1/merchant-sell-orders/${own.id}`)).json().data.status,
      'pending',
    );
    await merchantCall(t, a.jwt, 'POST', `/v1/merchant-sell-orders/${own.id}/cancel`);
  });

  it('many orders of three merchants created at once, several matchers at once: no fill pairs a merchant with itself', async () => {
    const creates = merchants.flatMap((m) =>
      Array.from({ length: 12 }, (_, index) =>
        merchantCall(
          t,
          m.jwt,
          'POST',
          index % 2 ? '/v1/merchant-buy-orders' : '/v1/merchant-sell-orders',
          index % 2 ? buyBody((1 + (index % 3)) * PAY, 'THB', 10_000) : sellBody((1 + (index % 4)) * PAY, 'THB', 1_000),
        ),
      ),
    );
    const created = await Promise.all(creates);
    assert.deepEqual(
      created.map((response) => response.statusCode),
      created.map(() => 201),
    );
    const matcher = { ...t.application.payouts.matcher, batch_size: 5 };
    for (let round = 0; round < 6; round += 1)
      await Promise.all([runMatcher(matcher), runMatcher(matcher), runMatcher(matcher)]);
    const pairs = await t.db
      .selectFrom('order_fills as f')
      .innerJoin('sell_orders as s', 's.id', 'f.sell_order_id')
      .innerJoin('buy_orders as b', 'b.id', 'f.buy_order_id')
      .select(['s.merchant_id as seller', 'b.merchant_id as buyer'])
      .where('s.target_currency', '=', 'THB')
      .execute();
    assert.ok(pairs.length >= 10, `fills were made (${pairs.length})`);
    assert.deepEqual(
      pairs.filter((pair) => pair.seller === pair.buyer),
      [],
    );
    // Every buy that could fill from another merchant did: 18 buys of 1-3 PAY against 18 sells of 1-4 PAY, priced to fill.
    const open_buys = await t.db
      .selectFrom('buy_orders')
      .select(['id', 'merchant_id'])
      .where('status', '=', 'pending')
      .execute();
    for (const open of open_buys) {
      const others = await t.db
        .selectFrom('sell_orders')
        .select('id')
        .where('status', '=', 'pending')
        .where('merchant_id', '<>', open.merchant_id)
        .where('target_currency', '=', 'THB')
        .execute();
      assert.deepEqual(others, [], `buy ${open.id} is pending while another merchant's sell is open`);
    }
    assert.equal((await t.application.ledger.verify()).ok, true);
  });
});

/** The app with EasySlip (a fake) checking cash-leg slips, and CASH_LEG_RETRY_MAX `retries`. */
async function startWithEasySlip(retries: number) {
  const KEY = 'easyslip-test-key';
  const fake = await startFakeEasySlip(KEY);
  const t = await startTestApp({
    env: {
      LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE,
      RECEIPT_VALIDATOR: 'easyslip',
      EASYSLIP_BASE_URL: fake.url,
      EASYSLIP_API_KEY: KEY,
      CASH_LEG_RETRY_MAX: String(retries),
    },
  });
  return { fake, t };
}

describe("payouts: confirm-cash-leg checks the slip against the seller's destination and the fill's amount", () => {
  let fake: Awaited<ReturnType<typeof startFakeEasySlip>>;
  let t: TestApp;
  let seller: TestMerchant;
  let buyer: TestMerchant;
  let buyer2: TestMerchant;
  const confirm = (id: string, extra: Record<string, unknown> = {}) =>
    merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${id}/confirm-cash-leg`, {
      receipt_base64: Buffer.from(`%PDF-1.4 ${randomUUID()}`).toString('base64'),
      content_type: 'application/pdf',
      ...extra,
    });
  const attempts = (id: string) =>
    t.db
      .selectFrom('sell_order_cash_leg_attempts')
      .select(['outcome', 'reason', 'buy_order_id'])
      .where('sell_order_id', '=', id)
      .orderBy('attempt_number')
      .execute();

  before(async () => {
    ({ fake, t } = await startWithEasySlip(10));
    seller = await t.createMerchant('Seller');
    buyer = await t.createMerchant('Buyer One');
    buyer2 = await t.createMerchant('Buyer Two');
    await fund(t, seller.id, 100 * PAY);
  });
  after(() => Promise.all([t.close(), fake.close()]));

  it('a slip of another amount or into another account is refused; the right one completes', async () => {
    const sell = await createSell(t, seller.jwt, sellBody(10 * PAY, 'THB', 35_000, PROMPTPAY));
    const buy = await createBuy(t, buyer.jwt, buyBody(10 * PAY, 'THB', 35_000));
    await matchAndInstruct(t);

    fake.answer({ kind: 'success', amount_baht: 349.99, receiver_proxy: 'xxx-xxx-5678' });
    const short = await confirm(sell.id);
    assert.deepEqual(
      [short.statusCode, short.json().data.status, short.json().data.last_cash_leg_outcome],
      [200, 'cash_leg_in_flight', 'failed'],
    );

    fake.answer({ kind: 'success', amount_baht: 350, receiver_proxy: 'xxx-xxx-9999' });
    const elsewhere = await confirm(sell.id);
    assert.deepEqual(
      [elsewhere.statusCode, elsewhere.json().data.status, elsewhere.json().data.last_cash_leg_outcome],
      [200, 'cash_leg_in_flight', 'failed'],
    );

    fake.answer({ kind: 'success', amount_baht: 350, receiver_proxy: 'xxx-xxx-5678' });
    const paid = await confirm(sell.id);
    assert.deepEqual([paid.statusCode, paid.json().data.status], [200, 'completed']);
    assert.deepEqual(await attempts(sell.id), [
      { outcome: 'failed', reason: 'amount_mismatch', buy_order_id: buy.id },
      { outcome: 'failed', reason: 'receiver_mismatch', buy_order_id: buy.id },
      { outcome: 'verified', reason: null, buy_order_id: buy.id },
    ]);
  });

  it('a sell filled by two buyers is confirmed fill by fill, each against its own amount, and completes with the last', async () => {
    const sell = await createSell(t, seller.jwt, sellBody(10 * PAY, 'THB', 35_000, THAI_BANK));
    const b1 = await createBuy(t, buyer.jwt, buyBody(4 * PAY, 'THB', 14_000));
    const b2 = await createBuy(t, buyer2.jwt, buyBody(6 * PAY, 'THB', 21_000));
    await matchAndInstruct(t);
    assert.equal(
      (await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${sell.id}`)).json().data.status,
      'cash_leg_in_flight',
    );

    const asked = fake.received.length;
    const stranger = await confirm(sell.id, { buy_order_id: randomUUID() });
    expectError(stranger, 400, 'VALIDATION_ERROR');
    assert.deepEqual(
      stranger.json().error.details.map((detail: { field: string }) => detail.field),
      ['body.buy_order_id'],
    );
    assert.equal(fake.received.length, asked, 'a slip for no fill of this order never reaches the provider');

    // b2's amount on b1's fill: refused.
    fake.answer({ kind: 'success', amount_baht: 210, receiver_account: 'xxx-x-x5678-x' });
    const wrong = await confirm(sell.id, { buy_order_id: b1.id });
    assert.deepEqual(
      [wrong.json().data.status, wrong.json().data.last_cash_leg_outcome],
      ['cash_leg_in_flight', 'failed'],
    );
    fake.answer({ kind: 'success', amount_baht: 140, receiver_account: 'xxx-x-x5678-x' });
    const first = await confirm(sell.id, { buy_order_id: b1.id });
    assert.deepEqual(
      [first.json().data.status, first.json().data.last_cash_leg_outcome],
      ['cash_leg_in_flight', 'verified'],
    );
    // Unnamed, a slip is checked against the oldest fill still unpaid: b2's.
    fake.answer({ kind: 'success', amount_baht: 140, receiver_account: 'xxx-x-x5678-x' });
    const not_b2 = await confirm(sell.id);
    assert.deepEqual(
      [not_b2.json().data.status, not_b2.json().data.last_cash_leg_outcome],
      ['cash_leg_in_flight', 'failed'],
    );
    fake.answer({ kind: 'success', amount_baht: 210, receiver_account: 'xxx-x-x5678-x' });
    const last = await confirm(sell.id);
    assert.deepEqual([last.statusCode, last.json().data.status], [200, 'completed']);
    assert.deepEqual(await attempts(sell.id), [
      { outcome: 'failed', reason: 'amount_mismatch', buy_order_id: b1.id },
      { outcome: 'verified', reason: null, buy_order_id: b1.id },
      { outcome: 'failed', reason: 'amount_mismatch', buy_order_id: b2.id },
      { outcome: 'verified', reason: null, buy_order_id: b2.id },
    ]);
    assert.equal((await t.application.ledger.verify()).ok, true);
  });

  it('a two-buyer sell that fails after one fill was confirmed paid: that buyer keeps its PAY, the other is taken back', async () => {
    const sell = await createSell(t, seller.jwt, sellBody(10 * PAY, 'THB', 35_000, THAI_BANK));
    const b1 = await createBuy(t, buyer.jwt, buyBody(4 * PAY, 'THB', 14_000));
    const b2 = await createBuy(t, buyer2.jwt, buyBody(6 * PAY, 'THB', 21_000));
    await matchAndInstruct(t);
    const balance = (merchant_id: string, account: 'available' | 'reserve') =>
      t.application.ledger.balance(`live:merchant:${merchant_id}:${account}`);
    const before = {
      seller: await balance(seller.id, 'available'),
      b1: await balance(buyer.id, 'available'),
      b2: await balance(buyer2.id, 'available'),
    };
    fake.answer({ kind: 'success', amount_baht: 140, receiver_account: 'xxx-x-x5678-x' });
    assert.equal((await confirm(sell.id, { buy_order_id: b1.id })).json().data.last_cash_leg_outcome, 'verified');
    // b2 never pays: the cash leg times out and the sweeper gives up on the order.
    t.clock.advance(49 * 3600_000);
    assert.ok((await sweepSellOrders(t.application.payouts.sell_orders)) >= 1);
    const failed = (await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${sell.id}`)).json().data;
    assert.deepEqual([failed.status, failed.failure_reason], ['failed', 'cash_leg_retry_exhausted']);
    // b1 paid the seller 140 THB for its 4 PAY: it keeps them, and the seller's 4 PAY are burned as at completion.
    assert.equal(await balance(buyer.id, 'available'), before.b1);
    assert.equal(await balance(buyer2.id, 'available'), before.b2 - 6 * PAY);
    assert.equal(await balance(seller.id, 'available'), before.seller + 6 * PAY);
    assert.equal(await balance(seller.id, 'reserve'), 0);
    const reversed = await t.db
      .selectFrom('order_fills')
      .select(['buy_order_id', 'reversed_micro_pay'])
      .where('sell_order_id', '=', sell.id)
      .where('reversed_at', 'is not', null)
      .execute();
    assert.deepEqual(reversed, [{ buy_order_id: b2.id, reversed_micro_pay: 6 * PAY }]);
    assert.deepEqual(await reconciliationDifferences(t, { except_test_funding: true }), []);
    assert.equal((await t.application.ledger.verify()).ok, true);
  });
});

describe('payouts: the cash-leg retry budget is per fill', () => {
  let fake: Awaited<ReturnType<typeof startFakeEasySlip>>;
  let t: TestApp;
  let seller: TestMerchant;
  const buyers: TestMerchant[] = [];
  const confirm = (id: string, buy_order_id: string, amount_baht: number) => {
    fake.answer({ kind: 'success', amount_baht, receiver_proxy: 'xxx-xxx-5678' });
    return merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${id}/confirm-cash-leg`, {
      receipt_base64: Buffer.from(`%PDF-1.4 ${randomUUID()}`).toString('base64'),
      content_type: 'application/pdf',
      buy_order_id,
    });
  };
  const view = async (id: string) =>
    (await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${id}`)).json().data;

  before(async () => {
    ({ fake, t } = await startWithEasySlip(2));
    seller = await t.createMerchant('Seller of many fills');
    for (let i = 1; i <= 4; i++) buyers.push(await t.createMerchant(`Fill buyer ${i}`));
    await fund(t, seller.id, 100 * PAY);
  });
  after(() => Promise.all([t.close(), fake.close()]));

  it('four fills, each refused once and then confirmed: eight attempts on a budget of 2, and the order completes', async () => {
    const sell = await createSell(t, seller.jwt, sellBody(8 * PAY, 'THB', 28_000, PROMPTPAY));
    const buys = [];
    for (const buyer of buyers) buys.push(await createBuy(t, buyer.jwt, buyBody(2 * PAY, 'THB', 7_000)));
    await matchAndInstruct(t);
    for (const [index, buy] of buys.entries()) {
      const refused = await confirm(sell.id, buy.id, 69.99);
      assert.deepEqual(
        [refused.statusCode, refused.json().data.status, refused.json().data.last_cash_leg_outcome],
        [200, 'cash_leg_in_flight', 'failed'],
      );
      const paid = await confirm(sell.id, buy.id, 70);
      assert.equal(paid.statusCode, 200, paid.body);
      assert.equal(paid.json().data.status, index === buys.length - 1 ? 'completed' : 'cash_leg_in_flight');
      // the sweeper finds nothing to give up between confirmations
      assert.equal(await sweepSellOrders(t.application.payouts.sell_orders), 0);
    }
    const completed = await view(sell.id);
    assert.deepEqual([completed.status, completed.cash_leg_attempts], ['completed', 8]);
    assert.equal((await t.application.ledger.verify()).ok, true);
  });

  it('one fill refused twice uses up the budget: the sweeper fails the order; the fill confirmed before it stands', async () => {
    const sell = await createSell(t, seller.jwt, sellBody(4 * PAY, 'THB', 14_000, PROMPTPAY));
    const paid = await createBuy(t, buyers[0]!.jwt, buyBody(2 * PAY, 'THB', 7_000));
    const unpaid = await createBuy(t, buyers[1]!.jwt, buyBody(2 * PAY, 'THB', 7_000));
    await matchAndInstruct(t);
    assert.equal((await confirm(sell.id, paid.id, 70)).json().data.last_cash_leg_outcome, 'verified');
    assert.equal((await confirm(sell.id, unpaid.id, 69)).json().data.status, 'cash_leg_in_flight');
    assert.equal(await sweepSellOrders(t.application.payouts.sell_orders), 0, 'one refusal of 2 leaves a retry');
    assert.equal((await confirm(sell.id, unpaid.id, 69)).json().data.status, 'cash_leg_in_flight');
    assert.equal(await sweepSellOrders(t.application.payouts.sell_orders), 1);
    const failed = await view(sell.id);
    assert.deepEqual([failed.status, failed.failure_reason], ['failed', 'cash_leg_retry_exhausted']);
    const reversed = await t.db
      .selectFrom('order_fills')
      .select('buy_order_id')
      .where('sell_order_id', '=', sell.id)
      .where('reversed_at', 'is not', null)
      .execute();
    assert.deepEqual(reversed, [{ buy_order_id: unpaid.id }]);
    assert.equal((await t.application.ledger.verify()).ok, true);
  });
});
