import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { expireBuyOrders } from '../../src/modules/buy-orders/service.ts';
import { accounts } from '../../src/modules/ledger/port.ts';
import { runMatcher } from '../../src/modules/payouts/matcher.ts';
import { requestCashLegs } from '../../src/modules/sell-orders/cash-leg.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { allOperationsDocument, startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import {
  balancesOf,
  buyBody,
  createBuy,
  createSell,
  eventTypes,
  expectError,
  fund,
  merchantCall,
  MINT_SOURCE,
  PAY,
  sellBody,
} from '../helpers/orders.ts';

describe('buy orders: create, read, list, cancel, expiry', () => {
  let t: TestApp;
  let a: TestMerchant;
  let b: TestMerchant;

  before(async () => {
    t = await startTestApp({ env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE } });
    a = await t.createMerchant('Buyer A');
    b = await t.createMerchant('Buyer B');
  });
  after(() => t.close());

  it('creates a pending buy order with buy_order.created; no PAY moves yet', async () => {
    const response = await merchantCall(t, a.jwt, 'POST', '/v1/merchant-buy-orders', buyBody(3 * PAY, 'AUD', 450));
    assert.equal(response.statusCode, 201, response.body);
    const order = response.json().data;
    assert.equal(order.status, 'pending');
    assert.equal(order.merchant_id, a.id);
    assert.equal(order.amount_micro_pay, 3 * PAY);
    assert.equal(order.fiat_currency, 'AUD');
    assert.equal(order.fiat_amount, 450);
    assert.equal(order.matched_sell_order_id, null);
    assert.deepEqual(await eventTypes(t, order.id), ['buy_order.created']);
    assert.equal((await balancesOf(t, a.id)).available, 0);
  });

  it('400 on bad bodies and keys, replay and 409 conflict on the idempotency key', async () => {
    for (const body of [
      {},
      buyBody(0),
      buyBody(PAY, 'EUR'),
      buyBody(PAY, 'THB', 0),
      { ...buyBody(), x: 1 },
      { ...buyBody(), amount_micro_pay: '5' },
    ]) {
      expectError(await merchantCall(t, a.jwt, 'POST', '/v1/merchant-buy-orders', body), 400, 'VALIDATION_ERROR');
    }
    expectError(
      await merchantCall(t, a.jwt, 'POST', '/v1/merchant-buy-orders', buyBody(), null),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await merchantCall(t, a.jwt, 'POST', '/v1/merchant-buy-orders', buyBody(), 'abc'),
      400,
      'VALIDATION_ERROR',
    );
    const key = randomUUID();
    const first = await merchantCall(t, a.jwt, 'POST', '/v1/merchant-buy-orders', buyBody(PAY), key);
    const again = await merchantCall(t, a.jwt, 'POST', '/v1/merchant-buy-orders', buyBody(PAY), key);
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.json().data.id, first.json().data.id);
    expectError(
      await merchantCall(t, a.jwt, 'POST', '/v1/merchant-buy-orders', buyBody(2 * PAY), key),
      409,
      'IDEMPOTENCY_KEY_CONFLICT',
    );
    assert.deepEqual(await eventTypes(t, first.json().data.id), ['buy_order.created']);
    expectError(await merchantCall(t, null, 'POST', '/v1/merchant-buy-orders', buyBody()), 401, 'UNAUTHORIZED');
  });

  it('GET own 200, another merchant 403, unknown 404; list with filters and pagination', async () => {
    const order = await createBuy(t, b.jwt, buyBody(PAY, 'USD', 100));
    assert.equal((await merchantCall(t, b.jwt, 'GET', `/v1/merchant-buy-orders/${order.id}`)).statusCode, 200);
    expectError(await merchantCall(t, a.jwt, 'GET', `/v1/merchant-buy-orders/${order.id}`), 403, 'FORBIDDEN');
    expectError(await merchantCall(t, b.jwt, 'GET', `/v1/merchant-buy-orders/${randomUUID()}`), 404, 'NOT_FOUND');
    expectError(await merchantCall(t, null, 'GET', '/v1/merchant-buy-orders'), 401, 'UNAUTHORIZED');
    t.clock.advance(1000);
    await createBuy(t, b.jwt, buyBody(PAY, 'THB', 100));
    const usd = await merchantCall(t, b.jwt, 'GET', '/v1/merchant-buy-orders?fiat_currency=USD&status=pending');
    assert.deepEqual(
      usd.json().data.map((o: { id: string }) => o.id),
      [order.id],
    );
    const page = await merchantCall(t, b.jwt, 'GET', '/v1/merchant-buy-orders?limit=1');
    assert.equal(page.json().has_more, true);
    const next = await merchantCall(
      t,
      b.jwt,
      'GET',
      `/v1/merchant-buy-orders?limit=1&cursor=${page.json().next_cursor}`,
    );
    assert.equal(next.json().data[0].id, order.id);
    for (const query of ['limit=0', 'limit=101', 'status=matched,nope'])
      expectError(await merchantCall(t, b.jwt, 'GET', `/v1/merchant-buy-orders?${query}`), 400, 'VALIDATION_ERROR');
  });

  it('cancel: pending -> cancelled with buy_order.cancelled; again 409 BUY_ORDER_BAD_STATE; others 403', async () => {
    const order = await createBuy(t, a.jwt);
    expectError(await merchantCall(t, b.jwt, 'POST', `/v1/merchant-buy-orders/${order.id}/cancel`), 403, 'FORBIDDEN');
    const cancelled = await merchantCall(t, a.jwt, 'POST', `/v1/merchant-buy-orders/${order.id}/cancel`);
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.equal(cancelled.json().data.status, 'cancelled');
    assert.ok(cancelled.json().data.cancelled_at);
    expectError(
      await merchantCall(t, a.jwt, 'POST', `/v1/merchant-buy-orders/${order.id}/cancel`),
      409,
      'BUY_ORDER_BAD_STATE',
    );
    assert.deepEqual(await eventTypes(t, order.id), ['buy_order.created', 'buy_order.cancelled']);
  });

  it('pending buy orders expire after BUY_ORDER_PENDING_TTL_HOURS', async () => {
    const order = await createBuy(t, a.jwt, buyBody(PAY, 'SGD'));
    t.clock.advance(24 * 3600_000);
    assert.ok((await expireBuyOrders(t.application.payouts.buy_orders)) >= 1);
    const read = (await merchantCall(t, a.jwt, 'GET', `/v1/merchant-buy-orders/${order.id}`)).json().data;
    assert.equal(read.status, 'expired');
    expectError(
      await merchantCall(t, a.jwt, 'POST', `/v1/merchant-buy-orders/${order.id}/cancel`),
      409,
      'BUY_ORDER_BAD_STATE',
    );
  });
});

describe('the FIFO matcher', () => {
  let t: TestApp;
  let seller: TestMerchant;
  let buyer: TestMerchant;
  let buyer2: TestMerchant;
  const match = () => runMatcher(t.application.payouts.matcher);

  before(async () => {
    t = await startTestApp({ env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE } });
    seller = await t.createMerchant('Seller');
    buyer = await t.createMerchant('Buyer');
    buyer2 = await t.createMerchant('Buyer 2');
    await fund(t, seller.id, 10_000 * PAY);
  });
  after(() => t.close());

  it('price-time priority: a buy fills against the oldest sells priced at or below it, partially where amounts differ', async () => {
    const sell = async (id: string) =>
      (await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${id}`)).json().data;
    const buy = async (jwt: string, id: string) =>
      (await merchantCall(t, jwt, 'GET', `/v1/merchant-buy-orders/${id}`)).json().data;
    const fill = (buy_id: string, sell_id: string) =>
      t.db
        .selectFrom('order_fills')
        .selectAll()
        .where('buy_order_id', '=', buy_id)
        .where('sell_order_id', '=', sell_id)
        .executeTakeFirst();
    // Asking prices (THB minor per PAY): s1 4000, s2 3500, s3 3500; s_usd another currency.
    const s1 = await createSell(t, seller.jwt, sellBody(10 * PAY, 'THB', 40_000));
    t.clock.advance(10);
    const s2 = await createSell(t, seller.jwt, sellBody(10 * PAY, 'THB', 35_000));
    t.clock.advance(10);
    const s3 = await createSell(t, seller.jwt, sellBody(5 * PAY, 'THB', 17_500));
    t.clock.advance(10);
    const s_usd = await createSell(t, seller.jwt, sellBody(10 * PAY, 'USD', 100));
    t.clock.advance(10);
    // The case: 1 THB for 10 PAY is far below every ask and must never fill.
    const b_low = await createBuy(t, buyer.jwt, buyBody(10 * PAY, 'THB', 100));
    t.clock.advance(10);
    // 12 PAY at 3600 per PAY: s1 (4000) is too dear; s2 fills 10, s3 fills 2 of its 5.
    const b1 = await createBuy(t, buyer.jwt, buyBody(12 * PAY, 'THB', 43_200));
    t.clock.advance(10);
    // 5 PAY at exactly 4000 per PAY: the oldest sell at or below it is s1 (not the cheaper s3).
    const b2 = await createBuy(t, buyer2.jwt, buyBody(5 * PAY, 'THB', 20_000));

    assert.equal(await match(), 3);
    assert.deepEqual(
      [await fill(b1.id, s2.id), await fill(b1.id, s3.id), await fill(b2.id, s1.id)].map((f) => [
        f?.amount_micro_pay,
        f?.fiat_amount,
      ]),
      [
        [10 * PAY, 35_000],
        [2 * PAY, 7_000], // 17,500 x 2/5
        [5 * PAY, 20_000], // 40,000 x 5/10, at the sell's price
      ],
    );
    const low = await buy(buyer.jwt, b_low.id);
    assert.deepEqual([low.status, low.filled_micro_pay], ['pending', 0]);
    const bought = await buy(buyer.jwt, b1.id);
    assert.deepEqual(
      [bought.status, bought.filled_micro_pay, bought.filled_fiat_amount, bought.matched_sell_order_id],
      ['matched', 12 * PAY, 42_000, s2.id],
    );
    assert.ok(bought.mint_transfer_id);
    assert.deepEqual((await buy(buyer2.jwt, b2.id)).status, 'matched');
    const [r1, r2, r3] = [await sell(s1.id), await sell(s2.id), await sell(s3.id)];
    assert.deepEqual(
      [r1.status, r1.filled_micro_pay, r1.filled_fiat_amount, r1.matched_buy_order_id],
      ['pending', 5 * PAY, 20_000, b2.id],
    );
    assert.deepEqual(
      [r2.status, r2.filled_micro_pay, r2.filled_fiat_amount, r2.matched_buy_order_id],
      ['matched', 10 * PAY, 35_000, b1.id],
    );
    assert.deepEqual([r3.status, r3.filled_micro_pay, r3.filled_fiat_amount], ['pending', 2 * PAY, 7_000]);
    assert.equal((await sell(s_usd.id)).status, 'pending');
    assert.deepEqual(await eventTypes(t, b1.id), ['buy_order.created', 'buy_order.matched']);
    assert.equal((await balancesOf(t, buyer.id)).available, 12 * PAY);
    assert.equal((await balancesOf(t, buyer2.id)).available, 5 * PAY);
    const mint = await t.db
      .selectFrom('ledger_transfers')
      .selectAll()
      .where('key', '=', `buy_order:${b1.id}:fill:${s3.id}`)
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      [mint.kind, mint.debit_account, mint.credit_account, mint.amount_micro_pay],
      ['mint', accounts.mintSource(MINT_SOURCE, false), accounts.merchantAvailable(buyer.id, false), 2 * PAY],
    );
    assert.equal(await match(), 0);

    // 4 PAY at 3500: only s3 (3 PAY left) qualifies; its last fill takes the rest of its fiat (17,500 - 7,000).
    const b3 = await createBuy(t, buyer.jwt, buyBody(4 * PAY, 'THB', 14_000));
    assert.equal(await match(), 1);
    assert.deepEqual(
      [(await fill(b3.id, s3.id))?.fiat_amount, (await sell(s3.id)).status, (await sell(s3.id)).filled_fiat_amount],
      [10_500, 'matched', 17_500],
    );
    const partial = await buy(buyer.jwt, b3.id);
    assert.deepEqual(
      [partial.status, partial.filled_micro_pay, partial.filled_fiat_amount],
      ['pending', 3 * PAY, 10_500],
    );
    assert.deepEqual(await eventTypes(t, b3.id), ['buy_order.created', 'buy_order.partially_filled']);
    // A partly filled buy can be cancelled: the PAY it received stays, nothing more fills.
    const cancelled = await merchantCall(t, buyer.jwt, 'POST', `/v1/merchant-buy-orders/${b3.id}/cancel`);
    assert.deepEqual(
      [cancelled.statusCode, cancelled.json().data.status, cancelled.json().data.filled_micro_pay],
      [200, 'cancelled', 3 * PAY],
    );
    // A matched buy order cannot be cancelled.
    expectError(
      await merchantCall(t, buyer.jwt, 'POST', `/v1/merchant-buy-orders/${b1.id}/cancel`),
      409,
      'BUY_ORDER_BAD_STATE',
    );

    // s1 is half filled: cancelling it returns the unfilled 5 PAY and leaves it matched for the filled half.
    const seller_before = (await balancesOf(t, seller.id)).available;
    const closed = await merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${s1.id}/cancel`);
    assert.deepEqual(
      [closed.statusCode, closed.json().data.status, closed.json().data.filled_micro_pay],
      [200, 'matched', 5 * PAY],
    );
    assert.equal((await balancesOf(t, seller.id)).available, seller_before + 5 * PAY);
    await requestCashLegs(t.application.payouts.sell_orders);
    const instruction = await t.event<{ data: { cash_leg: { fiat_amount: number; amount_micro_pay: number } } }>(
      s1.id,
      'sell_order.cash_leg_requested',
    );
    assert.deepEqual(instruction.data.cash_leg.fiat_amount, 20_000);
    assert.equal((await t.application.ledger.verify()).ok, true);
    // Tidy: cancel what is left so later tests start from an empty book.
    await merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${s_usd.id}/cancel`);
    await merchantCall(t, buyer.jwt, 'POST', `/v1/merchant-buy-orders/${b_low.id}/cancel`);
  });

  it('a price one minor unit above the bid does not fill; an equal price (cross-multiplied, no floats) does', async () => {
    // Ask 10,001 per 3 PAY vs bid 10,000 per 3 PAY: no fill.
    const dear = await createSell(t, seller.jwt, sellBody(3 * PAY, 'SGD', 10_001));
    const bid = await createBuy(t, buyer.jwt, buyBody(3 * PAY, 'SGD', 10_000));
    assert.equal(await match(), 0);
    await merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${dear.id}/cancel`);
    // Ask 20,000 per 6 PAY is exactly the bid (3,333.33... per PAY on both sides): it fills, half the sell.
    const equal = await createSell(t, seller.jwt, sellBody(6 * PAY, 'SGD', 20_000));
    assert.equal(await match(), 1);
    const filled = (await merchantCall(t, buyer.jwt, 'GET', `/v1/merchant-buy-orders/${bid.id}`)).json().data;
    assert.deepEqual([filled.status, filled.filled_fiat_amount], ['matched', 10_000]);
    await merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${equal.id}/cancel`);
  });

  it('unmatchable old sells do not block younger ones (the matcher walks past its first window)', async () => {
    const matcher = { ...t.application.payouts.matcher, batch_size: 3 };
    const stuck = [];
    for (let i = 0; i < 7; i++) {
      stuck.push(await createSell(t, seller.jwt, sellBody(PAY, 'USD')));
      t.clock.advance(1);
    }
    const young = await createSell(t, seller.jwt, sellBody(2 * PAY, 'USD'));
    const buy = await createBuy(t, buyer.jwt, buyBody(2 * PAY, 'USD'));
    assert.equal(await runMatcher(matcher), 1);
    assert.equal(
      (await merchantCall(t, buyer.jwt, 'GET', `/v1/merchant-buy-orders/${buy.id}`)).json().data.matched_sell_order_id,
      young.id,
    );
    for (const s of stuck) await merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${s.id}/cancel`);
  });

  it('several matchers at once over 60 pairs: every order matched exactly once, one mint per buy', async () => {
    const sells = [];
    const buys = [];
    for (let i = 0; i < 60; i++) {
      sells.push((await createSell(t, seller.jwt, sellBody(((i % 3) + 1) * PAY, 'THB'))).id);
      buys.push((await createBuy(t, i % 2 ? buyer.jwt : buyer2.jwt, buyBody(((i % 3) + 1) * PAY, 'THB'))).id);
      // Distinct times: with price-time priority the oldest eligible sell is taken, so each buy meets its own sell.
      t.clock.advance(1);
    }
    const matcher = { ...t.application.payouts.matcher, batch_size: 7 };
    let total = 0;
    for (let round = 0; round < 20 && total < 60; round++) {
      const counts = await Promise.all(Array.from({ length: 4 }, () => runMatcher(matcher)));
      total += counts.reduce((sum, n) => sum + n, 0);
    }
    assert.equal(total, 60);
    const matched_sells = await t.db
      .selectFrom('sell_orders')
      .select(['id', 'matched_buy_order_id', 'amount_micro_pay'])
      .where('id', 'in', sells)
      .execute();
    assert.ok(matched_sells.every((s) => s.matched_buy_order_id !== null));
    assert.equal(new Set(matched_sells.map((s) => s.matched_buy_order_id)).size, 60);
    const matched_buys = await t.db
      .selectFrom('buy_orders')
      .select(['id', 'matched_sell_order_id', 'amount_micro_pay', 'status'])
      .where('id', 'in', buys)
      .execute();
    assert.ok(matched_buys.every((b) => b.status === 'matched'));
    for (const b of matched_buys) {
      const s = matched_sells.find((x) => x.id === b.matched_sell_order_id)!;
      assert.equal(s.matched_buy_order_id, b.id);
      assert.equal(s.amount_micro_pay, b.amount_micro_pay);
    }
    const mints = await t.db
      .selectFrom('ledger_transfers')
      .select('key')
      .where(
        'key',
        'in',
        matched_buys.map((b) => `buy_order:${b.id}:fill:${b.matched_sell_order_id}`),
      )
      .execute();
    assert.equal(mints.length, 60);
    assert.equal((await t.application.ledger.verify()).ok, true);
  });

  it('cancels racing the matcher: each buy order ends either cancelled (no mint) or matched (minted), never both', async () => {
    const sells = [];
    const buys = [];
    for (let i = 0; i < 20; i++) {
      sells.push((await createSell(t, seller.jwt, sellBody(PAY, 'SGD'))).id);
      buys.push((await createBuy(t, buyer.jwt, buyBody(PAY, 'SGD'))).id);
    }
    const results = await Promise.all([
      runMatcher(t.application.payouts.matcher),
      ...buys.map((id) => merchantCall(t, buyer.jwt, 'POST', `/v1/merchant-buy-orders/${id}/cancel`)),
      ...sells.slice(0, 5).map((id) => merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${id}/cancel`)),
    ]);
    for (const r of results.slice(1)) {
      if (typeof r === 'number') continue;
      assert.ok(
        r.statusCode === 200 ||
          (r.statusCode === 409 && ['BUY_ORDER_BAD_STATE', 'SELL_ORDER_BAD_STATE'].includes(r.json().error.code)),
        r.body,
      );
    }
    const rows = await t.db
      .selectFrom('buy_orders')
      .select(['id', 'status', 'matched_sell_order_id'])
      .where('id', 'in', buys)
      .execute();
    const minted = new Set(
      (
        await t.db.selectFrom('ledger_transfers').select('key').where('key', 'like', 'buy_order:%:fill:%').execute()
      ).map((r) => r.key.split(':')[1]),
    );
    for (const row of rows) {
      assert.ok(['matched', 'cancelled'].includes(row.status));
      assert.equal(minted.has(row.id), row.status === 'matched');
    }
    const sell_rows = await t.db
      .selectFrom('sell_orders')
      .select(['status', 'failure_reason', 'matched_buy_order_id'])
      .where('id', 'in', sells)
      .execute();
    assert.equal(
      sell_rows.filter((s) => s.status === 'matched').length,
      rows.filter((b) => b.status === 'matched').length,
    );
    assert.equal((await t.application.ledger.verify()).ok, true);
  });
});

describe('the matcher on the default set-up (LEDGER_MINT_SOURCE_ACCOUNT unset)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it('payouts work out of the box: the default "treasury" issuance account exists from the start and the matcher mints from it', async () => {
    const account = await t.admin('GET', '/admin/ledger/accounts/live:issuance:treasury');
    assert.equal(account.statusCode, 200, account.body);
    assert.equal(account.json().data.balance_micro_pay, 0);
    assert.equal((await t.admin('GET', '/admin/ledger/accounts/sandbox:issuance:treasury')).statusCode, 200);
    const ready = await t.request({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200, ready.body);
    assert.equal(ready.json().checks.matcher.ok, true);
    assert.match(ready.json().checks.matcher.detail, /treasury/);

    const seller = await t.createMerchant('Seller');
    const buyer = await t.createMerchant('Buyer');
    await fund(t, seller.id, 10 * PAY);
    const sell = await createSell(t, seller.jwt, sellBody(PAY));
    const buy = await createBuy(t, buyer.jwt, buyBody(PAY));
    assert.equal(await runMatcher(t.application.payouts.matcher), 1);
    assert.equal(
      (await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${sell.id}`)).json().data.status,
      'matched',
    );
    const mint = await t.db
      .selectFrom('ledger_transfers')
      .selectAll()
      .where('key', '=', `buy_order:${buy.id}:fill:${sell.id}`)
      .executeTakeFirstOrThrow();
    assert.equal(mint.debit_account, 'live:issuance:treasury');
    assert.equal((await balancesOf(t, buyer.id)).available, PAY);
  });

  it('a matcher that cannot run refuses (nothing matched), says so in a metric, and makes /readyz 503', async () => {
    const matcher = t.application.payouts.matcher;
    const configured = matcher.mint_source;
    matcher.mint_source = undefined;
    try {
      const seller = await t.createMerchant('Seller 2');
      const buyer = await t.createMerchant('Buyer 2');
      await fund(t, seller.id, 10 * PAY);
      const sell = await createSell(t, seller.jwt, sellBody(PAY, 'AUD'));
      await createBuy(t, buyer.jwt, buyBody(PAY, 'AUD'));
      assert.equal(await runMatcher(matcher), 0);
      assert.equal(
        (await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${sell.id}`)).json().data.status,
        'pending',
      );
      assert.equal((await balancesOf(t, buyer.id)).available, 0);
      const ready = await t.request({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 503);
      assert.equal(ready.json().checks.matcher.ok, false);
      assert.match(ready.json().checks.matcher.detail, /LEDGER_MINT_SOURCE_ACCOUNT is unset/);
      const metrics = await t.request({ method: 'GET', url: '/metrics' });
      assert.match(metrics.body, /mpay_matcher_mint_source_configured 0/);
      assert.match(metrics.body, /mpay_matcher_refused_runs_total [1-9]/);
    } finally {
      matcher.mint_source = configured;
    }
    assert.equal((await t.request({ method: 'GET', url: '/readyz' })).statusCode, 200);
  });

  it('LEDGER_MINT_SOURCE_ACCOUNT is validated at start-up: a name or a full issuance account name, else a message naming it', () => {
    assert.equal(loadConfig({}).ledger_mint_source_account, 'treasury');
    assert.equal(loadConfig({ LEDGER_MINT_SOURCE_ACCOUNT: 'vault' }).ledger_mint_source_account, 'vault');
    // A full name is reduced to its name, never prefixed twice (live:issuance:live:issuance:vault).
    assert.equal(loadConfig({ LEDGER_MINT_SOURCE_ACCOUNT: 'live:issuance:vault' }).ledger_mint_source_account, 'vault');
    assert.equal(
      loadConfig({ LEDGER_MINT_SOURCE_ACCOUNT: 'sandbox:issuance:vault' }).ledger_mint_source_account,
      'vault',
    );
    for (const bad of ['live:merchant:x:available', 'two words', 'live:issuance:', 'x'.repeat(101)]) {
      assert.throws(
        () => loadConfig({ LEDGER_MINT_SOURCE_ACCOUNT: bad }),
        (error: Error) => error instanceof ConfigError && /LEDGER_MINT_SOURCE_ACCOUNT/.test(error.message),
        bad,
      );
    }
  });

  it('the OpenAPI document lists every payout route with its auth and error statuses', async () => {
    const doc = await allOperationsDocument(t);
    const expected: [string, string, string[]][] = [
      ['/v1/merchant-sell-orders', 'post', ['201', '409', '502']],
      ['/v1/merchant-sell-orders/{id}/confirm-cash-leg', 'post', ['200', '403', '404', '409', '502']],
      ['/v1/merchant-sell-orders/{id}/cancel', 'post', ['200', '409']],
      ['/v1/merchant-buy-orders', 'post', ['201']],
      ['/v1/merchant-buy-orders/{id}/cancel', 'post', ['200', '409']],
      ['/v1/merchant-disputes', 'post', ['201', '403', '404', '409']],
      ['/v1/merchant-disputes/{id}', 'get', ['200', '403', '404']],
      ['/admin/disputes/{id}/resolve', 'post', ['200', '409']],
    ];
    for (const [path, method, statuses] of expected) {
      const operation = doc.paths[path]?.[method];
      assert.ok(operation, `${method} ${path} missing`);
      for (const status of statuses) assert.ok(operation.responses[status], `${method} ${path} lacks ${status}`);
    }
    assert.deepEqual(doc.paths['/v1/merchant-sell-orders'].get.security, [
      { merchantJwt: [] },
      { dashboardSession: [] },
    ]);
  });
});
