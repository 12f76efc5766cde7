import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';

/** The six causes of 500s a fuzz pass found, one case each: every one is a 400/401 with the envelope. */
const cursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const UUID = '00000000-0000-4000-8000-000000000000';

function assertError(response: LightMyRequestResponse, status: number, code: string) {
  assert.equal(response.statusCode, status, response.body);
  const body = response.json();
  assert.equal(body.success, false);
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(Array.isArray(body.error.details));
}

describe('hostile input: 400/401 with the envelope, never a 500', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let payment_id: string;
  const count = async (table: 'payments' | 'payment_proofs') =>
    Number(
      (
        await t.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant();
    await t.createSeller(thbSeller());
    const created = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: 'ok-1',
      amount: '100.00',
      currency: 'THB',
      return_url: 'https://shop.example/r',
    });
    assert.equal(created.statusCode, 201, created.body);
    payment_id = created.json().data.id;
  });
  after(() => t.close());

  it('refuses NUL bytes and lone surrogates in JSON strings and keys, and writes nothing', async () => {
    const before_count = await count('payments');
    for (const order_id of ['a\u0000b', 'x\uD800', '\uDFFF']) {
      const response = await t.call('POST', '/v1/trades', merchant.live, {
        order_id,
        amount: '100.00',
        currency: 'THB',
        return_url: 'https://shop.example/r',
      });
      assertError(response, 400, 'VALIDATION_ERROR');
      assert.equal(response.json().error.details[0].field, 'body.order_id');
    }
    const bad_key = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: 'k-1',
      amount: '1.00',
      currency: 'THB',
      return_url: 'https://shop.example/r',
      metadata: { 'a\u0000': 'x' },
    });
    assertError(bad_key, 400, 'VALIDATION_ERROR');
    assert.equal(await count('payments'), before_count);
  });

  it('refuses NUL bytes and lone surrogates in query parameters and path segments', async () => {
    assertError(await t.call('GET', '/v1/events?type=%00', merchant.live), 400, 'VALIDATION_ERROR');
    assertError(await t.call('GET', '/v1/webhook-deliveries?event_id=a%00b', merchant.live), 400, 'VALIDATION_ERROR');
    assertError(await t.call('GET', '/v1/payments/%ED%A0%80', merchant.live), 400, 'VALIDATION_ERROR');
    assertError(await t.call('GET', '/v1/payments/a%00b', merchant.live), 400, 'VALIDATION_ERROR');
  });

  it('refuses crafted cursors: non-UUID ids and dates out of range', async () => {
    const crafted = [
      cursor(['2026-01-01T00:00:00.000Z', 'not-a-uuid']),
      cursor(['2026-01-01T00:00:00.000Z', 42]),
      cursor(['0000-01-01T00:00:00.000Z', UUID]),
      cursor(['+275760-09-13T00:00:00.000Z', UUID]),
      cursor(['-271821-04-20T00:00:00.000Z', UUID]),
      cursor({ created_at: '2026-01-01', id: UUID }),
    ];
    for (const value of crafted) {
      for (const url of [
        '/v1/payments',
        '/v1/webhook-deliveries',
        '/v1/pending-funds',
        '/v1/settlements',
        '/v1/events',
      ]) {
        assertError(await t.call('GET', `${url}?cursor=${value}`, merchant.live), 400, 'VALIDATION_ERROR');
      }
      for (const url of ['/v1/merchant-sell-orders', '/v1/merchant-buy-orders', '/v1/merchant-disputes']) {
        assertError(
          await t.request({
            method: 'GET',
            url: `${url}?cursor=${value}`,
            headers: { authorization: `Bearer ${merchant.jwt}` },
          }),
          400,
          'VALIDATION_ERROR',
        );
      }
    }
    // A sandbox payment id in a payments cursor is a real position, not an error.
    const ok = await t.call(
      'GET',
      `/v1/payments?cursor=${cursor(['2026-01-01T00:00:00.000Z', `sbx_${UUID}`])}`,
      merchant.test,
    );
    assert.equal(ok.statusCode, 200, ok.body);
  });

  it('refuses date-time values PostgreSQL cannot hold (year 0, leap seconds)', async () => {
    assertError(await t.call('GET', '/v1/payments?from=0000-01-01T00:00:00Z', merchant.live), 400, 'VALIDATION_ERROR');
    assertError(await t.call('GET', '/v1/payments?to=2026-12-31T23:59:60Z', merchant.live), 400, 'VALIDATION_ERROR');
    assert.equal((await t.call('GET', '/v1/payments?from=2026-01-01T00:00:00Z', merchant.live)).statusCode, 200);
  });

  it('answers a malformed session cookie with 401 before anything else', async () => {
    for (const cookie of ['mpay_session=%E0%A4%A', 'mpay_session=%', 'other=1; mpay_session=%zz']) {
      assertError(
        await t.request({ method: 'GET', url: '/v1/merchants/me', headers: { cookie } }),
        401,
        'UNAUTHORIZED',
      );
    }
  });

  it('answers a multipart body without boundary, truncated or with broken part headers with 400 (API and hosted checkout)', async () => {
    const before_count = await count('payment_proofs');
    const truncated = Buffer.from(
      '--X\r\nContent-Disposition: form-data; name="proof"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n',
    );
    const bodies = [
      { payload: 'garbage', 'content-type': 'multipart/form-data' },
      { payload: truncated, 'content-type': 'multipart/form-data; boundary=X' },
      { payload: '--X\r\nbroken header\r\n\r\nbody\r\n--X--\r\n', 'content-type': 'multipart/form-data; boundary=X' },
    ];
    for (const { payload, ...headers } of bodies) {
      assertError(
        await t.request({
          method: 'POST',
          url: `/v1/payments/${payment_id}/proof`,
          headers: { ...headers, 'x-api-key': merchant.live },
          payload,
        }),
        400,
        'VALIDATION_ERROR',
      );
      const page = await t.request({ method: 'POST', url: `/checkout/${payment_id}/proof`, headers, payload });
      assert.equal(page.statusCode, 400, page.body.slice(0, 200));
    }
    assert.equal(await count('payment_proofs'), before_count);
  });

  it('refuses unknown query parameters by name instead of passing them on', async () => {
    for (const url of [
      '/v1/payments?merchant_id=x',
      '/v1/payments?is_sandbox=true',
      '/v1/settlements?order=id',
      '/v1/events?__proto__=1',
    ]) {
      assertError(await t.call('GET', url, merchant.live), 400, 'VALIDATION_ERROR');
    }
    assertError(
      await t.request({
        method: 'GET',
        url: '/v1/merchant-sell-orders?select=*',
        headers: { authorization: `Bearer ${merchant.jwt}` },
      }),
      400,
      'VALIDATION_ERROR',
    );
    assert.equal((await t.call('GET', '/v1/payments?limit=5&status=matched', merchant.live)).statusCode, 200);
    // The buyer's hosted page keeps ignoring tracking parameters on its link.
    assert.equal(
      (await t.request({ method: 'GET', url: `/checkout/${payment_id}?lang=en&utm_source=mail` })).statusCode,
      200,
    );
  });

  it('answers a URL with broken percent-encoding or an over-long segment with the envelope', async () => {
    assertError(await t.call('GET', '/v1/payments/%E0%A4%A', merchant.live), 400, 'VALIDATION_ERROR');
    assertError(await t.call('GET', `/v1/payments/${'9'.repeat(1000)}`, merchant.live), 400, 'VALIDATION_ERROR');
  });
});
