import assert from 'node:assert/strict';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { ADMIN_HEADERS, startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';

const trade = (order_id: string) => ({
  order_id,
  amount: '100.00',
  currency: 'THB',
  return_url: 'https://shop.example/done',
});

describe('HTTP conventions', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  before(async () => {
    t = await startTestApp({ env: { PUBLIC_BASE_URL: 'http://localhost:3000', PORT: '3000' } });
    merchant = await t.createMerchant();
    await t.createSeller(thbSeller());
  });
  after(() => t.close());

  it('CORS: the server\'s own origins by default (docs "Try it out" from 127.0.0.1 and localhost), others refused', async () => {
    for (const origin of ['http://127.0.0.1:3000', 'http://localhost:3000']) {
      const preflight = await t.request({
        method: 'OPTIONS',
        url: '/v1/payments',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'x-api-key,content-type,idempotency-key',
        },
      });
      assert.equal(preflight.statusCode, 204, origin);
      assert.equal(preflight.headers['access-control-allow-origin'], origin);
      assert.match(String(preflight.headers['access-control-allow-headers']), /Idempotency-Key/);
      const simple = await t.call('GET', '/v1/payments', merchant.live, undefined, { origin });
      assert.equal(simple.headers['access-control-allow-origin'], origin);
      assert.match(String(simple.headers['access-control-expose-headers']), /X-Request-Id/);
    }
    const foreign = await t.call('GET', '/v1/payments', merchant.live, undefined, { origin: 'https://evil.example' });
    assert.equal(foreign.headers['access-control-allow-origin'], undefined);
  });

  it('CORS_ALLOWED_ORIGINS configures the list; a bad entry stops start-up with its name', () => {
    assert.deepEqual(
      loadConfig({ CORS_ALLOWED_ORIGINS: 'https://shop.example, https://admin.example:8443' }).cors_allowed_origins,
      ['https://shop.example', 'https://admin.example:8443'],
    );
    assert.deepEqual(loadConfig({ CORS_ALLOWED_ORIGINS: '*' }).cors_allowed_origins, ['*']);
    assert.deepEqual(loadConfig({ PORT: '4000' }).cors_allowed_origins, [
      'http://localhost:4000',
      'http://127.0.0.1:4000',
    ]);
    assert.throws(
      () => loadConfig({ CORS_ALLOWED_ORIGINS: 'https://shop.example/path' }),
      (error: unknown) => error instanceof ConfigError && /CORS_ALLOWED_ORIGINS/.test(error.message),
    );
  });

  it('compresses large JSON with br or gzip, leaves small bodies and PNGs alone', async () => {
    const plain = await t.request({ method: 'GET', url: '/openapi.json' });
    assert.ok(plain.body.length > 100_000);
    const br = await t.request({ method: 'GET', url: '/openapi.json', headers: { 'accept-encoding': 'br' } });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.ok(br.rawPayload.length < plain.rawPayload.length / 5, `${br.rawPayload.length} bytes`);
    assert.equal(brotliDecompressSync(br.rawPayload).toString(), plain.body);
    const gzip = await t.request({ method: 'GET', url: '/openapi.json', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gzip.headers['content-encoding'], 'gzip');
    assert.equal(gunzipSync(gzip.rawPayload).toString(), plain.body);
    const small = await t.request({ method: 'GET', url: '/healthz', headers: { 'accept-encoding': 'gzip, br' } });
    assert.equal(small.headers['content-encoding'], undefined);
    const created = await t.call('POST', '/v1/trades', merchant.live, trade('png-1'));
    const png = await t.request({
      method: 'GET',
      url: `/v1/payments/${created.json().data.id}/promptpay-qr`,
      headers: { 'accept-encoding': 'gzip, br' },
    });
    assert.equal(png.statusCode, 200);
    assert.equal(png.headers['content-type'], 'image/png');
    assert.equal(png.headers['content-encoding'], undefined);
  });

  it("401 carries WWW-Authenticate for the route's credential", async () => {
    const key = await t.call('GET', '/v1/payments', undefined);
    assert.equal(key.statusCode, 401);
    assert.match(
      String(key.headers['www-authenticate']),
      /^Bearer realm="mpay", ApiKey realm="mpay", header="X-API-Key"$/,
    );
    const admin = await t.request({ method: 'GET', url: '/admin/disputes' });
    assert.equal(admin.statusCode, 401);
    assert.equal(admin.headers['www-authenticate'], 'Bearer realm="mpay-admin"');
    const ok = await t.call('GET', '/v1/payments', merchant.live);
    assert.equal(ok.headers['www-authenticate'], undefined);
  });

  it('405 with Allow for a known path and the wrong method; 404 for an unknown path', async () => {
    const wrong = await t.call('DELETE', '/v1/payments', merchant.live);
    assert.equal(wrong.statusCode, 405);
    assert.equal(wrong.headers['allow'], 'GET, HEAD, POST');
    assert.equal(wrong.json().error.code, 'METHOD_NOT_ALLOWED');
    const with_id = await t.call('PUT', '/v1/payments/00000000-0000-4000-8000-000000000000', merchant.live, {});
    assert.equal(with_id.statusCode, 405);
    assert.equal(with_id.headers['allow'], 'GET, HEAD');
    const unknown = await t.call('DELETE', '/v1/nothing-here', merchant.live);
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().error.code, 'NOT_FOUND');
  });

  it('validation errors list every failing field, with the allowed values of enumerations', async () => {
    const response = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: '',
      amount: '100.00',
      currency: 'EUR',
      payment_method: 'cash',
      return_url: 'https://shop.example/',
    });
    assert.equal(response.statusCode, 400);
    const error = response.json().error;
    assert.equal(error.code, 'VALIDATION_ERROR');
    const by_field = Object.fromEntries(error.details.map((detail: { field: string }) => [detail.field, detail]));
    assert.deepEqual(by_field['body.currency'], {
      field: 'body.currency',
      message: 'currency must be one of "THB", "AUD", "USD", "SGD"',
      allowed: ['THB', 'AUD', 'USD', 'SGD'],
    });
    assert.deepEqual(by_field['body.payment_method']?.allowed, ['promptpay', 'payid', 'bank_transfer']);
    assert.match(by_field['body.order_id']?.message, /^order_id must NOT have fewer than 1 characters/);
    assert.equal(error.details.length, 3);
    assert.doesNotMatch(error.message, /equal to constant/);
    assert.match(error.message, /currency must be one of/);

    const missing = await t.call('POST', '/v1/trades', merchant.live, {});
    assert.deepEqual(
      missing
        .json()
        .error.details.map((detail: { field: string }) => detail.field)
        .sort(),
      ['body.amount', 'body.currency', 'body.order_id', 'body.return_url'],
    );
  });

  it('ETag on single-resource GETs; If-None-Match answers 304 until the resource changes', async () => {
    const id = (await t.call('POST', '/v1/trades', merchant.live, trade('etag-1'))).json().data.id;
    const first = await t.call('GET', `/v1/payments/${id}`, merchant.live);
    const tag = String(first.headers['etag']);
    assert.match(tag, /^W\/"[\w-]+"$/);
    const again = await t.call('GET', `/v1/payments/${id}`, merchant.live, undefined, { 'if-none-match': tag });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    assert.equal(again.headers['etag'], tag);
    // The buyer opening the checkout moves the payment to payment_pending: a new representation.
    assert.equal((await t.request({ method: 'GET', url: `/checkout/${id}` })).statusCode, 200);
    const changed = await t.call('GET', `/v1/payments/${id}`, merchant.live, undefined, { 'if-none-match': tag });
    assert.equal(changed.statusCode, 200);
    assert.notEqual(changed.headers['etag'], tag);
    const list = await t.call('GET', '/v1/payments', merchant.live);
    assert.equal(list.headers['etag'], undefined);
    const admin = await t.request({ method: 'GET', url: '/admin/disputes', headers: ADMIN_HEADERS });
    assert.equal(admin.headers['etag'], undefined);
  });
});
