import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';

const body = (order_id: string, amount: number | string = 10_000) => ({
  order_id,
  amount,
  currency: 'THB',
  return_url: 'https://shop.example/return',
});

describe('idempotency (shared mechanism, exercised through POST /v1/trades and /v1/payments)', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let other: TestMerchant;
  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('A');
    other = await t.createMerchant('B');
    await t.createSeller(thbSeller(100_000_000));
  });
  after(() => t.close());

  async function countPayments(order_id: string): Promise<number> {
    const row = await t.db
      .selectFrom('payments')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('order_id', '=', order_id)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  it('20 identical requests at once make one payment; the others replay it', async () => {
    const key = randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.call('POST', '/v1/trades', merchant.live, body('race-1'), { 'idempotency-key': key }),
      ),
    );
    assert.deepEqual([...new Set(responses.map((r) => r.statusCode))], [201]);
    assert.equal(new Set(responses.map((r) => r.json().data.id)).size, 1);
    assert.equal(responses.filter((r) => r.headers['idempotent-replayed'] === 'true').length, 19);
    assert.equal(await countPayments('race-1'), 1);
    const keys = await t.db.selectFrom('idempotency_keys').selectAll().where('key', '=', key).execute();
    assert.equal(keys.length, 1);
    assert.equal(keys[0]!.response_status, 201);
    const events = await t.db
      .selectFrom('events')
      .select('id')
      .where('resource_id', '=', responses[0]!.json().data.id)
      .execute();
    assert.equal(events.length, 1, 'one payment.matched event, not twenty');
  });

  it('the same key with another body is 409 IDEMPOTENCY_KEY_CONFLICT and writes nothing', async () => {
    const key = randomUUID();
    const first = await t.call('POST', '/v1/trades', merchant.live, body('conflict-1'), { 'idempotency-key': key });
    assert.equal(first.statusCode, 201);
    const second = await t.call('POST', '/v1/trades', merchant.live, body('conflict-1', 20_000), {
      'idempotency-key': key,
    });
    assert.equal(second.statusCode, 409);
    assert.equal(second.json().error.code, 'IDEMPOTENCY_KEY_CONFLICT');
    assert.equal(await countPayments('conflict-1'), 1);
  });

  it('replays the stored status and body exactly, key order in the body notwithstanding', async () => {
    const key = randomUUID();
    const first = await t.call('POST', '/v1/trades', merchant.live, body('replay-1'), { 'idempotency-key': key });
    const reordered = {
      return_url: 'https://shop.example/return',
      currency: 'THB',
      amount: 10_000,
      order_id: 'replay-1',
    };
    const again = await t.call('POST', '/v1/trades', merchant.live, reordered, { 'idempotency-key': key });
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
    assert.equal(first.headers['idempotent-replayed'], undefined);
  });

  it('scopes keys per merchant, per mode and per route', async () => {
    const key = randomUUID();
    const a = await t.call('POST', '/v1/trades', merchant.live, body('scope-1'), { 'idempotency-key': key });
    const b = await t.call('POST', '/v1/trades', other.live, body('scope-1'), { 'idempotency-key': key });
    const c = await t.call('POST', '/v1/trades', merchant.sandbox, body('scope-1'), { 'idempotency-key': key });
    const d = await t.call('POST', '/v1/payments', merchant.live, body('scope-2'), { 'idempotency-key': key });
    assert.deepEqual(
      [a, b, c, d].map((r) => r.statusCode),
      [201, 201, 201, 201],
    );
    assert.equal(new Set([a, b, c, d].map((r) => r.json().data.id)).size, 4);
    assert.ok(c.json().data.id.startsWith('sbx_'));
  });

  it('a failed request stores nothing, so a retry with the same key runs again', async () => {
    const key = randomUUID();
    const too_much = await t.call('POST', '/v1/trades', merchant.live, body('retry-1', 999_000_000_000), {
      'idempotency-key': key,
    });
    assert.equal(too_much.statusCode, 409);
    assert.equal(too_much.json().error.code, 'PAYMENT_INSUFFICIENT_LIQUIDITY');
    assert.equal((await t.db.selectFrom('idempotency_keys').select('id').where('key', '=', key).execute()).length, 0);
    const retry = await t.call('POST', '/v1/trades', merchant.live, body('retry-1', 999_000_000_000), {
      'idempotency-key': key,
    });
    assert.equal(retry.statusCode, 409, 'evaluated again, not replayed');
    assert.equal(retry.headers['idempotent-replayed'], undefined);
  });

  it('refuses a malformed key with 400 and writes nothing', async () => {
    const response = await t.call('POST', '/v1/trades', merchant.live, body('badkey-1'), {
      'idempotency-key': 'has spaces in it',
    });
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().error.code, 'VALIDATION_ERROR');
    assert.equal(await countPayments('badkey-1'), 0);
  });

  it('forgets keys after 7 days', async () => {
    const key = randomUUID();
    const first = await t.call('POST', '/v1/trades', merchant.live, body('ttl-1'), { 'idempotency-key': key });
    t.clock.advance(7 * 24 * 3600 * 1000 + 1000);
    const later = await t.call('POST', '/v1/trades', merchant.live, body('ttl-2'), { 'idempotency-key': key });
    assert.equal(later.statusCode, 201);
    assert.notEqual(later.json().data.id, first.json().data.id);
    t.clock.advance(-(7 * 24 * 3600 * 1000 + 1000));
  });
});
