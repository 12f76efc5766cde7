import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';

/** POST /v1/trades with `quote_lock_id`: the legs use the locked rate; a bad lock is refused before anything is written. */
describe('fx: trades with quote locks', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let other: TestMerchant;
  let order = 0;

  const trade = (
    key: string,
    quote_lock_id: string | undefined,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) =>
    t.call(
      'POST',
      '/v1/trades',
      key,
      {
        order_id: `t-${++order}`,
        amount: 3600,
        currency: 'THB',
        return_url: 'https://shop.example/r',
        ...(quote_lock_id ? { quote_lock_id } : {}),
        ...extra,
      },
      headers,
    );
  const lock = async (key: string, currency = 'THB'): Promise<string> => {
    const response = await t.call('POST', '/v1/fx/quote-locks', key, { currency });
    assert.equal(response.statusCode, 201, response.body);
    return response.json().data.id;
  };
  const paymentCount = async () =>
    Number(
      (
        await t.db
          .selectFrom('payments')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant();
    other = await t.createMerchant('Other');
    // two live sellers at 35.00 with 2000 THB-minor each: a 3600 trade takes two legs
    await t.createSeller(thbSeller(2000, '35.00', '0812345678'));
    await t.createSeller(thbSeller(2000, '35.10', '0898765432'));
    await t.admin('PUT', '/admin/fx/reference-prices', { base: 'PAY', quote: 'THB', price: '36.00' });
  });
  after(() => t.close());

  it('uses the locked rate for every leg and marks the lock used by the payment', async () => {
    const lock_id = await lock(merchant.live);
    const created = await trade(merchant.live, lock_id);
    assert.equal(created.statusCode, 201, created.body);
    const payment = created.json().data;
    assert.equal(payment.quote_lock_id, lock_id);
    assert.equal(payment.match_details.length, 2);
    // 2000 satang = 20 THB at 36 THB/PAY = 0.555555 PAY (rounded down); 1600 satang = 16/36 = 0.444444 PAY
    assert.deepEqual(
      payment.match_details.map((leg: any) => [leg.allocated_fiat_amount, leg.rate, leg.amount_micro_pay]),
      [
        [2000, '36.00', 555_555],
        [1600, '36.00', 444_444],
      ],
    );
    const read = await t.call('GET', `/v1/fx/quote-locks/${lock_id}`, merchant.live);
    assert.deepEqual(
      [read.json().data.status, read.json().data.payment_id, read.json().data.used_at],
      ['used', payment.id, t.clock.now().toISOString()],
    );
    // release the liquidity for the next tests
    await t.db.updateTable('sellers').set({ reserved_minor: 0 }).execute();
  });

  it("a trade without a lock uses the sellers' own rates", async () => {
    const created = await trade(merchant.live, undefined, { amount: 100 });
    assert.equal(created.statusCode, 201);
    assert.deepEqual(
      created.json().data.match_details.map((leg: any) => leg.rate),
      ['35.00'],
    );
    await t.db.updateTable('sellers').set({ reserved_minor: 0 }).execute();
  });

  it('refuses a used lock with 409 QUOTE_LOCK_USED and writes nothing', async () => {
    const lock_id = await lock(merchant.live);
    assert.equal((await trade(merchant.live, lock_id, { amount: 100 })).statusCode, 201);
    const before_count = await paymentCount();
    const again = await trade(merchant.live, lock_id, { amount: 100 });
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().error.code, 'QUOTE_LOCK_USED');
    assert.equal(await paymentCount(), before_count);
    await t.db.updateTable('sellers').set({ reserved_minor: 0 }).execute();
  });

  it('refuses an expired lock with 409 QUOTE_LOCK_EXPIRED; one millisecond earlier it works', async () => {
    const expiring = await lock(merchant.live);
    const usable = await lock(merchant.live);
    t.clock.advance(29_999);
    assert.equal((await trade(merchant.live, usable, { amount: 100 })).statusCode, 201);
    t.clock.advance(1);
    const before_count = await paymentCount();
    const late = await trade(merchant.live, expiring, { amount: 100 });
    assert.equal(late.statusCode, 409);
    assert.equal(late.json().error.code, 'QUOTE_LOCK_EXPIRED');
    assert.equal(await paymentCount(), before_count);
    assert.equal((await t.call('GET', `/v1/fx/quote-locks/${expiring}`, merchant.live)).json().data.status, 'expired');
    await t.db.updateTable('sellers').set({ reserved_minor: 0 }).execute();
  });

  it('refuses a lock of another currency with 409 QUOTE_LOCK_MISMATCH and leaves it usable', async () => {
    await t.createSeller({
      currency: 'USD',
      payment_method: 'bank_transfer',
      display_name: 'USD',
      liquidity_minor: 100_000,
      rate: '1.00',
      bank: { code: '026009593', account_number: '000123456789', account_name: 'S' },
    });
    const usd_lock = await lock(merchant.live, 'USD');
    const before_count = await paymentCount();
    const mismatch = await trade(merchant.live, usd_lock, { amount: 100 });
    assert.equal(mismatch.statusCode, 409);
    assert.equal(mismatch.json().error.code, 'QUOTE_LOCK_MISMATCH');
    assert.equal(await paymentCount(), before_count);
    assert.equal((await t.call('GET', `/v1/fx/quote-locks/${usd_lock}`, merchant.live)).json().data.status, 'active');
    const usd = await trade(merchant.live, usd_lock, { amount: 100, currency: 'USD' });
    assert.equal(usd.statusCode, 201, usd.body);
    assert.deepEqual(
      usd.json().data.match_details.map((leg: any) => [leg.rate, leg.amount_micro_pay]),
      [['1.00', 1_000_000]],
    );
  });

  it('refuses a foreign, other-mode, unknown or malformed lock with 404 NOT_FOUND', async () => {
    const foreign = await lock(other.live);
    const sandbox = await lock(merchant.sandbox);
    const before_count = await paymentCount();
    for (const [key, lock_id] of [
      [merchant.live, foreign],
      [merchant.live, sandbox],
      [merchant.live, '00000000-0000-4000-8000-000000000000'],
      [merchant.live, 'not-a-lock'],
    ] as const) {
      const response = await trade(key, lock_id, { amount: 100 });
      assert.equal(response.statusCode, 404, lock_id);
      assert.equal(response.json().error.code, 'NOT_FOUND');
    }
    assert.equal(await paymentCount(), before_count);
    assert.equal(
      (await t.call('GET', `/v1/fx/quote-locks/${foreign}`, other.live)).json().data.status,
      'active',
      'a foreign attempt does not use it',
    );
    const sandbox_trade = await trade(merchant.sandbox, sandbox, { amount: 100 });
    assert.equal(sandbox_trade.statusCode, 201, sandbox_trade.body);
    assert.deepEqual(
      sandbox_trade.json().data.match_details.map((leg: any) => leg.rate),
      ['36.00'],
    );
  });

  it('a trade that fails after taking the lock (no liquidity) rolls back and leaves the lock usable', async () => {
    const lock_id = await lock(merchant.live);
    const too_big = await trade(merchant.live, lock_id, { amount: 1_000_000 });
    assert.equal(too_big.statusCode, 409);
    assert.equal(too_big.json().error.code, 'PAYMENT_INSUFFICIENT_LIQUIDITY');
    assert.equal((await t.call('GET', `/v1/fx/quote-locks/${lock_id}`, merchant.live)).json().data.status, 'active');
    assert.equal((await trade(merchant.live, lock_id, { amount: 100 })).statusCode, 201);
    await t.db.updateTable('sellers').set({ reserved_minor: 0 }).execute();
  });

  it('many trades racing for one lock: exactly one gets it', async () => {
    const lock_id = await lock(merchant.live);
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => trade(merchant.live, lock_id, { amount: 10 })),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    assert.deepEqual(statuses, [201, ...Array(9).fill(409)]);
    assert.ok(responses.filter((r) => r.statusCode === 409).every((r) => r.json().error.code === 'QUOTE_LOCK_USED'));
    const rows = await t.db.selectFrom('payments').select('id').where('quote_lock_id', '=', lock_id).execute();
    assert.equal(rows.length, 1);
    const read = await t.call('GET', `/v1/fx/quote-locks/${lock_id}`, merchant.live);
    assert.equal(read.json().data.payment_id, rows[0]!.id);
    await t.db.updateTable('sellers').set({ reserved_minor: 0 }).execute();
  });

  it('an idempotent replay of a trade with a lock returns the same payment, not QUOTE_LOCK_USED', async () => {
    const lock_id = await lock(merchant.live);
    const key = crypto.randomUUID();
    const body = {
      order_id: 'idem-lock',
      amount: 100,
      currency: 'THB',
      return_url: 'https://shop.example/r',
      quote_lock_id: lock_id,
    };
    const first = await t.call('POST', '/v1/trades', merchant.live, body, { 'idempotency-key': key });
    const second = await t.call('POST', '/v1/trades', merchant.live, body, { 'idempotency-key': key });
    assert.equal(first.statusCode, 201);
    assert.equal(second.statusCode, 201);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(second.json().data.id, first.json().data.id);
  });
});
