import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_HEADERS, startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';

const LOCK_MS = 30_000;

/** Reference prices, quote locks and their lifecycle under a manual clock. */
describe('fx: reference prices and quote locks', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let other: TestMerchant;

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant();
    other = await t.createMerchant('Other');
    await t.createSeller(thbSeller());
  });
  after(() => t.close());

  it('starts with PAY/USD fixed at 1 and no other price', async () => {
    const response = await t.call('GET', '/v1/fx/reference-prices', merchant.live);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(
      response.json().data.map((p: any) => [p.base, p.quote, p.price]),
      [['PAY', 'USD', '1.00']],
    );
    const thb = await t.call('GET', '/v1/fx/reference-prices?base=PAY&quote=THB', merchant.live);
    assert.equal(thb.statusCode, 409);
    assert.equal(thb.json().error.code, 'FX_PRICE_UNAVAILABLE');
    const lock = await t.call('POST', '/v1/fx/quote-locks', merchant.live, { currency: 'THB' });
    assert.equal(lock.statusCode, 409);
    assert.equal(lock.json().error.code, 'FX_PRICE_UNAVAILABLE');
    assert.equal((await t.db.selectFrom('fx_quote_locks').select('id').execute()).length, 0);
  });

  it('an operator sets prices (audited); PAY/USD and bad prices are refused', async () => {
    const set = await t.admin('PUT', '/admin/fx/reference-prices', { base: 'PAY', quote: 'THB', price: '35.50' });
    assert.equal(set.statusCode, 200, set.body);
    assert.deepEqual(set.json().data, {
      base: 'PAY',
      quote: 'THB',
      price: '35.50',
      updated_at: t.clock.now().toISOString(),
    });
    const update = await t.admin('PUT', '/admin/fx/reference-prices', { base: 'PAY', quote: 'THB', price: '35.75' });
    assert.equal(update.json().data.price, '35.75');
    const audit = await t.db
      .selectFrom('admin_audit_log')
      .selectAll()
      .where('action', '=', 'fx.reference_price.set')
      .orderBy('created_at')
      .execute();
    assert.equal(audit.length, 2);
    assert.deepEqual(
      audit.map((row) => [
        (row.details as any).price_before,
        (row.details as any).price_after,
        row.actor_user_id,
        row.target_id,
      ]),
      [
        [null, '35.50', 'ops-1', 'PAY/THB'],
        ['35.50', '35.75', 'ops-1', 'PAY/THB'],
      ],
    );

    const bad: [unknown, string][] = [
      [{ base: 'PAY', quote: 'USD', price: '1.10' }, 'VALIDATION_ERROR'],
      [{ base: 'PAY', quote: 'THB', price: '0' }, 'VALIDATION_ERROR'],
      [{ base: 'PAY', quote: 'THB', price: '-1' }, 'VALIDATION_ERROR'],
      [{ base: 'PAY', quote: 'THB', price: '1.123456789' }, 'VALIDATION_ERROR'],
      [{ base: 'PAY', quote: 'EUR', price: '1' }, 'VALIDATION_ERROR'],
      [{ base: 'USD', quote: 'THB', price: '1' }, 'VALIDATION_ERROR'],
      [{ quote: 'THB', price: '1' }, 'VALIDATION_ERROR'],
    ];
    for (const [body, code] of bad) {
      const response = await t.admin('PUT', '/admin/fx/reference-prices', body);
      assert.equal(response.statusCode, 400, JSON.stringify(body));
      assert.equal(response.json().error.code, code);
    }
    const none = await t.request({
      method: 'PUT',
      url: '/admin/fx/reference-prices',
      payload: { base: 'PAY', quote: 'THB', price: '1' },
    });
    assert.equal(none.statusCode, 401);
    const key = await t.call('PUT', '/admin/fx/reference-prices', merchant.live, {
      base: 'PAY',
      quote: 'THB',
      price: '1',
    });
    assert.equal(key.statusCode, 401);
    const support = await t.request({
      method: 'PUT',
      url: '/admin/fx/reference-prices',
      headers: { ...ADMIN_HEADERS, 'x-actor-role': 'support' },
      payload: { base: 'PAY', quote: 'THB', price: '1' },
    });
    assert.equal(support.statusCode, 403);
    assert.equal(support.json().error.code, 'ADMIN_FORBIDDEN');
    const listed = await t.call('GET', '/v1/fx/reference-prices?quote=THB,USD', merchant.sandbox);
    assert.deepEqual(
      listed.json().data.map((p: any) => [p.quote, p.price]),
      [
        ['THB', '35.75'],
        ['USD', '1.00'],
      ],
    );
  });

  it('a lock holds its rate until it expires, whatever the price does', async () => {
    const created = await t.call('POST', '/v1/fx/quote-locks', merchant.live, { currency: 'THB' });
    assert.equal(created.statusCode, 201, created.body);
    const lock = created.json().data;
    assert.deepEqual(
      [lock.base, lock.quote, lock.currency, lock.rate, lock.status, lock.is_sandbox, lock.used_at, lock.payment_id],
      ['PAY', 'THB', 'THB', '35.75', 'active', false, null, null],
    );
    assert.equal(new Date(lock.expires_at).getTime() - new Date(lock.created_at).getTime(), LOCK_MS);
    await t.admin('PUT', '/admin/fx/reference-prices', { base: 'PAY', quote: 'THB', price: '40.00' });
    t.clock.advance(LOCK_MS - 1);
    const still = await t.call('GET', `/v1/fx/quote-locks/${lock.id}`, merchant.live);
    assert.deepEqual([still.json().data.status, still.json().data.rate], ['active', '35.75']);
    t.clock.advance(1);
    const expired = await t.call('GET', `/v1/fx/quote-locks/${lock.id}`, merchant.live);
    assert.equal(expired.json().data.status, 'expired');
    const fresh = await t.call('POST', '/v1/fx/quote-locks', merchant.live, { currency: 'THB' });
    assert.equal(fresh.json().data.rate, '40.00');
  });

  it('honours FX_QUOTE_LOCK_SECONDS', async () => {
    const custom = await startTestApp({ env: { FX_QUOTE_LOCK_SECONDS: '5' } });
    try {
      const m = await custom.createMerchant();
      const lock = (await custom.call('POST', '/v1/fx/quote-locks', m.live, { currency: 'USD' })).json().data;
      assert.equal(new Date(lock.expires_at).getTime() - new Date(lock.created_at).getTime(), 5000);
      assert.equal(lock.rate, '1.00');
    } finally {
      await custom.close();
    }
  });

  it('locks are per merchant and mode: others get 404', async () => {
    const live = (await t.call('POST', '/v1/fx/quote-locks', merchant.live, { currency: 'USD' })).json().data;
    const sandbox = await t.call('POST', '/v1/fx/quote-locks', merchant.sandbox, { currency: 'USD' });
    assert.equal(sandbox.statusCode, 201);
    assert.equal(sandbox.json().data.is_sandbox, true);
    for (const [key, id] of [
      [other.live, live.id],
      [merchant.sandbox, live.id],
      [merchant.test, live.id],
      [merchant.live, sandbox.json().data.id],
      ['', '00000000-0000-4000-8000-000000000000'],
    ] as const) {
      const response = await t.call('GET', `/v1/fx/quote-locks/${id}`, key || merchant.live);
      assert.equal(response.statusCode, 404);
      assert.equal(response.json().error.code, 'NOT_FOUND');
    }
    assert.equal(
      (await t.call('GET', `/v1/fx/quote-locks/${sandbox.json().data.id}`, merchant.test)).statusCode,
      200,
      'test and sandbox keys share the sandbox mode',
    );
  });

  it('validates input and credentials', async () => {
    for (const body of [{}, { currency: 'EUR' }, { currency: 'THB', base: 'USD' }, { currency: 'THB', extra: 1 }]) {
      const response = await t.call('POST', '/v1/fx/quote-locks', merchant.live, body);
      assert.equal(response.statusCode, 400, JSON.stringify(body));
      assert.equal(response.json().error.code, 'VALIDATION_ERROR');
    }
    assert.equal((await t.call('GET', '/v1/fx/quote-locks/not-a-uuid', merchant.live)).statusCode, 400);
    assert.equal((await t.call('GET', '/v1/fx/reference-prices?quote=EUR', merchant.live)).statusCode, 400);
    for (const [method, url, body] of [
      ['GET', '/v1/fx/reference-prices', undefined],
      ['POST', '/v1/fx/quote-locks', { currency: 'THB' }],
      ['GET', '/v1/fx/quote-locks/00000000-0000-4000-8000-000000000000', undefined],
    ] as const) {
      const response = await t.call(method, url, undefined, body);
      assert.equal(response.statusCode, 401, url);
      assert.equal(response.json().error.code, 'UNAUTHORIZED');
    }
  });

  it('an Idempotency-Key on lock creation replays the same lock', async () => {
    const key = crypto.randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 5 }, () =>
        t.call('POST', '/v1/fx/quote-locks', merchant.live, { currency: 'THB' }, { 'idempotency-key': key }),
      ),
    );
    assert.ok(responses.every((response) => response.statusCode === 201));
    assert.equal(new Set(responses.map((response) => response.json().data.id)).size, 1);
    assert.equal(responses.filter((response) => response.headers['idempotent-replayed'] === 'true').length, 4);
    const conflict = await t.call(
      'POST',
      '/v1/fx/quote-locks',
      merchant.live,
      { currency: 'USD' },
      { 'idempotency-key': key },
    );
    assert.equal(conflict.statusCode, 409);
    assert.equal(conflict.json().error.code, 'IDEMPOTENCY_KEY_CONFLICT');
  });
});
