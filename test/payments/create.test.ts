import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';

const RETURN_URL = 'https://shop.example/return';

describe('POST /v1/trades and POST /v1/payments: creation and matching', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let order = 0;
  const next = () => `order-${++order}`;

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant();
  });
  beforeEach(async () => {
    // every test starts from its own offers: deactivate the previous ones
    await t.db.updateTable('sellers').set({ active: false }).where('synthetic', '=', false).execute();
  });
  after(() => t.close());

  const create = (body: Record<string, unknown>, key = merchant.live, path = '/v1/trades') =>
    t.call('POST', path, key, { return_url: RETURN_URL, currency: 'THB', ...body });

  it('accepts integer minor units and decimal strings, stores minor units, and answers the payment with its legs', async () => {
    const seller = await t.createSeller(thbSeller(1_000_000, '35.00'));
    const by_integer = await create({ order_id: next(), amount: 10_050 });
    const by_decimal = await create({ order_id: next(), amount: '100.50' });
    for (const response of [by_integer, by_decimal]) {
      assert.equal(response.statusCode, 201, response.body);
      const payment = response.json().data;
      assert.equal(response.json().success, true);
      assert.equal(payment.amount, 10_050);
      assert.equal(payment.amount_decimal, '100.50');
      assert.equal(payment.status, 'matched');
      assert.equal(payment.payment_method, 'promptpay');
      assert.equal(payment.is_sandbox, false);
      assert.equal(payment.merchant_id, merchant.id);
      assert.equal(payment.checkout_url, `http://gateway.test/checkout/${payment.id}`);
      assert.equal(payment.expires_at, new Date(t.clock.now().getTime() + 900_000).toISOString());
      // 100.50 THB at 35 THB per PAY = 2.871428 PAY, rounded down to the micro-PAY
      assert.deepEqual(payment.match_details, [
        {
          seller_id: seller.id,
          match_order: 1,
          allocated_fiat_amount: 10_050,
          rate: '35.00',
          amount_micro_pay: 2_871_428,
          proof: null,
        },
      ]);
    }
    const row = await t.db
      .selectFrom('sellers')
      .select(['reserved_minor'])
      .where('id', '=', seller.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.reserved_minor, 20_100);
  });

  it('writes payment.matched to the outbox in the same transaction', async () => {
    await t.createSeller(thbSeller());
    const payment = (await create({ order_id: next(), amount: 5_000 })).json().data;
    const events = await t.db.selectFrom('events').selectAll().where('resource_id', '=', payment.id).execute();
    assert.equal(events.length, 1);
    assert.equal(events[0]!.type, 'payment.matched');
    const envelope = events[0]!.payload as Record<string, unknown>;
    assert.equal(envelope['event'], 'payment.matched');
    assert.equal(envelope['type'], 'payment.matched');
    assert.equal(envelope['payment_id'], payment.id);
    assert.equal(envelope['amount'], 5_000);
    assert.equal(envelope['status'], 'matched');
    assert.equal(envelope['idempotency_key'], envelope['id']);
    assert.match(String(envelope['timestamp']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(envelope['sandbox'], undefined);
    assert.equal((envelope['data'] as { id: string }).id, payment.id);
  });

  it('allocates FIFO: best rate first, then the oldest offer, splitting across sellers', async () => {
    const old_expensive = await t.createSeller(thbSeller(100_000, '36.00'));
    const cheap_old = await t.createSeller(thbSeller(30_000, '35.00'));
    t.clock.advance(1000);
    const cheap_new = await t.createSeller(thbSeller(50_000, '35.00'));
    const response = await create({ order_id: next(), amount: 100_000 });
    assert.equal(response.statusCode, 201, response.body);
    const legs = response.json().data.match_details;
    assert.deepEqual(
      legs.map((leg: { seller_id: string; allocated_fiat_amount: number }) => [
        leg.seller_id,
        leg.allocated_fiat_amount,
      ]),
      [
        [cheap_old.id, 30_000],
        [cheap_new.id, 50_000],
        [old_expensive.id, 20_000],
      ],
    );
    assert.deepEqual(
      legs.map((leg: { match_order: number }) => leg.match_order),
      [1, 2, 3],
    );
  });

  it('insufficient liquidity is 409 PAYMENT_INSUFFICIENT_LIQUIDITY, keeps nothing, and the order_id can be retried', async () => {
    const seller = await t.createSeller(thbSeller(10_000));
    const order_id = next();
    const refused = await create({ order_id, amount: 10_001 });
    assert.equal(refused.statusCode, 409);
    assert.equal(refused.json().error.code, 'PAYMENT_INSUFFICIENT_LIQUIDITY');
    assert.equal((await t.db.selectFrom('payments').select('id').where('order_id', '=', order_id).execute()).length, 0);
    assert.equal(
      (await t.db.selectFrom('sellers').select('reserved_minor').where('id', '=', seller.id).executeTakeFirstOrThrow())
        .reserved_minor,
      0,
    );
    await t.createSeller(thbSeller(10_000));
    const retried = await create({ order_id, amount: 10_001 });
    assert.equal(retried.statusCode, 201);
  });

  it('a duplicate order_id is 409 PAYMENT_DUPLICATE_ORDER_ID; the same order_id in sandbox or for another merchant is fine', async () => {
    await t.createSeller(thbSeller());
    const order_id = next();
    assert.equal((await create({ order_id, amount: 1_000 })).statusCode, 201);
    const duplicate = await create({ order_id, amount: 1_000 });
    assert.equal(duplicate.statusCode, 409);
    assert.equal(duplicate.json().error.code, 'PAYMENT_DUPLICATE_ORDER_ID');
    assert.equal((await create({ order_id, amount: 1_000 }, merchant.sandbox)).statusCode, 201);
    const other = await t.createMerchant('Other');
    assert.equal((await create({ order_id, amount: 1_000 }, other.live)).statusCode, 201);
  });

  it('concurrent duplicates of one order_id: exactly one payment', async () => {
    await t.createSeller(thbSeller(10_000_000));
    const order_id = next();
    const responses = await Promise.all(Array.from({ length: 10 }, () => create({ order_id, amount: 1_000 })));
    assert.equal(responses.filter((r) => r.statusCode === 201).length, 1);
    const conflicts = responses.filter((r) => r.statusCode === 409);
    assert.equal(conflicts.length, 9);
    assert.ok(conflicts.every((r) => r.json().error.code === 'PAYMENT_DUPLICATE_ORDER_ID'));
  });

  it('30 concurrent creates against liquidity for 10: exactly 10 succeed and nothing is over-reserved', async () => {
    const seller = await t.createSeller(thbSeller(100_000));
    const responses = await Promise.all(Array.from({ length: 30 }, () => create({ order_id: next(), amount: 10_000 })));
    assert.equal(responses.filter((r) => r.statusCode === 201).length, 10);
    assert.equal(
      responses.filter((r) => r.statusCode === 409 && r.json().error.code === 'PAYMENT_INSUFFICIENT_LIQUIDITY').length,
      20,
    );
    const row = await t.db
      .selectFrom('sellers')
      .select(['reserved_minor', 'liquidity_minor'])
      .where('id', '=', seller.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.reserved_minor, 100_000);
    assert.equal(row.liquidity_minor, 100_000);
  });

  it('defaults and checks the payment method by currency', async () => {
    await t.createSeller({
      currency: 'AUD',
      payment_method: 'payid',
      display_name: 'AU',
      liquidity_minor: 1_000_000,
      rate: '1.50',
      payid: 'pay@seller.example',
    });
    const aud = await create({ order_id: next(), amount: '10.00', currency: 'AUD' });
    assert.equal(aud.statusCode, 201, aud.body);
    assert.equal(aud.json().data.payment_method, 'payid');
    const wrong = await create({ order_id: next(), amount: '10.00', currency: 'USD', payment_method: 'promptpay' });
    assert.equal(wrong.statusCode, 400);
    assert.equal(wrong.json().error.code, 'VALIDATION_ERROR');
    assert.equal(wrong.json().error.details[0].field, 'body.payment_method');
  });

  it('refuses bad input with 400 VALIDATION_ERROR and keeps nothing', async () => {
    await t.createSeller(thbSeller());
    const cases: Record<string, unknown>[] = [
      { amount: 1_000 }, // no order_id
      { order_id: next() }, // no amount
      { order_id: next(), amount: 0 },
      { order_id: next(), amount: -5 },
      { order_id: next(), amount: 10.5 },
      { order_id: next(), amount: '10.505' },
      { order_id: next(), amount: '1e5' },
      { order_id: next(), amount: 2 ** 53 },
      { order_id: next(), amount: 1_000, currency: 'EUR' },
      { order_id: next(), amount: 1_000, return_url: 'ftp://shop.example' },
      { order_id: next(), amount: 1_000, return_url: 'not a url' },
      { order_id: '', amount: 1_000 },
      { order_id: 'x'.repeat(256), amount: 1_000 },
      { order_id: next(), amount: 1_000, expires_in_seconds: 59 },
      { order_id: next(), amount: 1_000, metadata: { nested: { no: 1 } } },
      { order_id: next(), amount: 1_000, unknown_field: true },
    ];
    const before_count = (await t.db.selectFrom('payments').select('id').execute()).length;
    for (const body of cases) {
      const response = await create(body);
      assert.equal(response.statusCode, 400, `${JSON.stringify(body)} -> ${response.body}`);
      assert.equal(response.json().error.code, 'VALIDATION_ERROR');
    }
    assert.equal((await t.db.selectFrom('payments').select('id').execute()).length, before_count);
  });

  it('keeps metadata and a custom expiry', async () => {
    await t.createSeller(thbSeller());
    const response = await create({
      order_id: next(),
      amount: 1_000,
      metadata: { cart: 'c-1' },
      expires_in_seconds: 120,
    });
    assert.equal(response.statusCode, 201);
    assert.deepEqual(response.json().data.metadata, { cart: 'c-1' });
    assert.equal(response.json().data.expires_at, new Date(t.clock.now().getTime() + 120_000).toISOString());
  });

  it('POST /v1/payments is deprecated: Deprecation, Sunset and Link headers; POST /v1/trades is not', async () => {
    await t.createSeller(thbSeller());
    const legacy = await create({ order_id: next(), amount: 1_000 }, merchant.live, '/v1/payments');
    assert.equal(legacy.statusCode, 201);
    assert.equal(legacy.headers['deprecation'], '@1769212800');
    assert.equal(legacy.headers['sunset'], 'Fri, 24 Jul 2026 00:00:00 GMT');
    assert.equal(legacy.headers['link'], '</v1/trades>; rel="successor-version"');
    const trade = await create({ order_id: next(), amount: 1_000 });
    assert.equal(trade.headers['deprecation'], undefined);
  });

  it('401 without a key, with a malformed key, and with an unknown key', async () => {
    for (const key of [undefined, 'svc_live_short', `svc_live_${'A'.repeat(40)}`]) {
      const response = await t.call('POST', '/v1/trades', key, {
        order_id: next(),
        amount: 1_000,
        currency: 'THB',
        return_url: RETURN_URL,
      });
      assert.equal(response.statusCode, 401);
      assert.equal(response.json().error.code, 'UNAUTHORIZED');
    }
    const bearer = await t.request({
      method: 'GET',
      url: '/v1/payments',
      headers: { authorization: `Bearer ${merchant.live}` },
    });
    assert.equal(bearer.statusCode, 200, 'Authorization: Bearer works like X-API-Key');
  });

  it('sandbox keys match against synthetic sellers and never touch live liquidity', async () => {
    const seller = await t.createSeller(thbSeller(50_000));
    for (const key of [merchant.sandbox, merchant.test]) {
      const response = await create({ order_id: next(), amount: 10_000 }, key);
      assert.equal(response.statusCode, 201);
      const payment = response.json().data;
      assert.match(payment.id, /^sbx_[0-9a-f-]{36}$/);
      assert.equal(payment.is_sandbox, true);
      assert.notEqual(payment.match_details[0].seller_id, seller.id);
    }
    assert.equal(
      (await t.db.selectFrom('sellers').select('reserved_minor').where('id', '=', seller.id).executeTakeFirstOrThrow())
        .reserved_minor,
      0,
    );
  });
});

describe('POST /v1/payments after its sunset, with the operator switch on', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { PAYMENTS_CREATE_GONE_AFTER_SUNSET: 'true' } });
  });
  after(() => t.close());

  it('answers 410 GONE pointing at /v1/trades', async () => {
    const merchant = await t.createMerchant();
    const response = await t.call('POST', '/v1/payments', merchant.live, {
      order_id: 'o',
      amount: 1_000,
      currency: 'THB',
      return_url: RETURN_URL,
    });
    assert.equal(response.statusCode, 410);
    assert.equal(response.json().error.code, 'GONE');
    assert.equal(response.headers['link'], '</v1/trades>; rel="successor-version"');
  });
});
