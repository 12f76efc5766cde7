import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import {
  ADMIN_HEADERS,
  ADMIN_TOKEN,
  allOperationsDocument,
  startTestApp,
  type TestApp,
  type TestMerchant,
} from '../helpers/app.ts';

describe('foundation: request ids, errors, ops routes, OpenAPI', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant();
  });
  after(() => t.close());

  it('puts X-Request-Id on success, 401, 404 and validation responses', async () => {
    const responses = [
      await t.request({ method: 'GET', url: '/healthz' }),
      await t.call('GET', '/v1/payments', undefined),
      await t.call('GET', '/v1/nothing-here', merchant.live),
      await t.call('GET', '/v1/payments?limit=0', merchant.live),
    ];
    assert.deepEqual(
      responses.map((r) => r.statusCode),
      [200, 401, 404, 400],
    );
    for (const response of responses) assert.match(String(response.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    const ids = new Set(responses.map((r) => r.headers['x-request-id']));
    assert.equal(ids.size, responses.length);
  });

  it('echoes a plain caller X-Request-Id and replaces an unsafe one', async () => {
    const echoed = await t.request({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'req-123.abc' } });
    assert.equal(echoed.headers['x-request-id'], 'req-123.abc');
    const replaced = await t.request({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id<script>' } });
    assert.notEqual(replaced.headers['x-request-id'], 'bad id<script>');
  });

  it('answers every error with the one error body', async () => {
    const unauthorized = await t.call('GET', '/v1/payments', 'svc_live_notakey');
    assert.equal(unauthorized.statusCode, 401);
    assert.deepEqual(Object.keys(unauthorized.json()).sort(), ['error', 'success']);
    assert.equal(unauthorized.json().success, false);
    assert.equal(unauthorized.json().error.code, 'UNAUTHORIZED');
    assert.ok(Array.isArray(unauthorized.json().error.details));

    const invalid = await t.call('POST', '/v1/trades', merchant.live, { order_id: 'x' });
    assert.equal(invalid.statusCode, 400);
    assert.equal(invalid.json().error.code, 'VALIDATION_ERROR');
    assert.ok(invalid.json().error.details.length >= 1);

    const bad_json = await t.request({
      method: 'POST',
      url: '/v1/trades',
      headers: { 'x-api-key': merchant.live, 'content-type': 'application/json' },
      payload: '{"order_id":',
    });
    assert.equal(bad_json.statusCode, 400);
    assert.equal(bad_json.json().error.code, 'VALIDATION_ERROR');

    const missing = await t.request({ method: 'GET', url: '/nope' });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().error.code, 'NOT_FOUND');
  });

  it('serves /healthz, /readyz and Prometheus /metrics with per-route latency', async () => {
    assert.deepEqual((await t.request({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' });
    const ready = await t.request({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200);
    assert.equal(ready.json().checks.database.ok, true);
    await t.call('GET', '/v1/payments', merchant.live);
    const metrics = await t.request({ method: 'GET', url: '/metrics' });
    assert.equal(metrics.statusCode, 200);
    assert.match(String(metrics.headers['content-type']), /text\/plain/);
    assert.match(
      metrics.body,
      /http_request_duration_seconds_bucket\{[^}]*method="GET",route="\/v1\/payments",status_code="200"/,
    );
    assert.match(metrics.body, /http_requests_total\{method="GET",route="\/v1\/payments",status_code="200"\} 1/);
  });

  it('publishes OpenAPI 3.1 with every route, its security and its error responses', async () => {
    for (const url of ['/openapi.json', '/openapi-admin.json']) {
      const response = await t.request({ method: 'GET', url });
      assert.equal(response.statusCode, 200);
      assert.equal(response.json().openapi, '3.1.0');
    }
    const doc = await allOperationsDocument(t);
    const expected: [string, string][] = [
      ['post', '/v1/payments'],
      ['get', '/v1/payments'],
      ['get', '/v1/payments/{id}'],
      ['get', '/v1/payments/{id}/checkout'],
      ['post', '/v1/payments/{id}/cancel'],
      ['post', '/v1/payments/{id}/proof'],
      ['get', '/v1/payments/{id}/promptpay-qr'],
      ['get', '/v1/rates'],
      ['get', '/v1/reference/thai-banks'],
      ['post', '/v1/promptpay/qr'],
      ['post', '/v1/trades'],
      ['get', '/v1/trades/{id}'],
      ['post', '/admin/merchants'],
      ['post', '/admin/sellers'],
    ];
    for (const [method, path] of expected) assert.ok(doc.paths[path]?.[method], `${method} ${path} in OpenAPI`);
    const create = doc.paths['/v1/payments'].post;
    assert.equal(create.deprecated, true);
    assert.deepEqual(create.security, [{ apiKey: [] }, { apiKeyBearer: [] }]);
    for (const status of ['201', '400', '401', '409', '429', '500'])
      assert.ok(create.responses[status], `POST /v1/payments documents ${status}`);
    assert.deepEqual(doc.paths['/v1/reference/thai-banks'].get.security, []);
    assert.ok(doc.paths['/v1/payments/{id}/proof'].post.requestBody.content['multipart/form-data']);
    assert.deepEqual(doc.paths['/admin/merchants'].post.security, [{ adminToken: [] }]);
    assert.ok(doc.paths['/admin/merchants'].post.responses['403']);
    assert.ok(doc.components.securitySchemes.apiKey);
  });

  it('serves the interactive docs page', async () => {
    const response = await t.request({ method: 'GET', url: '/docs/' });
    assert.equal(response.statusCode, 200);
    assert.match(response.body, /<html/i);
  });

  it('admin routes: 401 without the token, 403 ADMIN_FORBIDDEN for a non super-admin', async () => {
    const none = await t.request({ method: 'POST', url: '/admin/merchants', payload: { name: 'x' } });
    assert.equal(none.statusCode, 401);
    assert.equal(none.json().error.code, 'UNAUTHORIZED');
    const wrong = await t.request({
      method: 'POST',
      url: '/admin/merchants',
      headers: { ...ADMIN_HEADERS, authorization: 'Bearer wrong-token-000000000000' },
      payload: { name: 'x' },
    });
    assert.equal(wrong.statusCode, 401);
    const role = await t.request({
      method: 'POST',
      url: '/admin/merchants',
      headers: { ...ADMIN_HEADERS, 'x-actor-role': 'support' },
      payload: { name: 'x' },
    });
    assert.equal(role.statusCode, 403);
    assert.equal(role.json().error.code, 'ADMIN_FORBIDDEN');
    const actor = await t.request({
      method: 'POST',
      url: '/admin/merchants',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-actor-role': 'super_admin' },
      payload: { name: 'x' },
    });
    assert.equal(actor.statusCode, 403);
    const count = await t.db
      .selectFrom('merchants')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 1, 'refused admin calls created nothing');
  });

  it('creates merchants whose keys are stored only as SHA-256 hashes', async () => {
    const rows = await t.db.selectFrom('api_keys').selectAll().where('merchant_id', '=', merchant.id).execute();
    assert.deepEqual(rows.map((row) => row.kind).sort(), ['live', 'sandbox', 'test']);
    for (const row of rows) {
      assert.match(row.key_hash, /^[0-9a-f]{64}$/);
      assert.ok(![merchant.live, merchant.test, merchant.sandbox].includes(row.key_hash));
    }
    assert.match(merchant.live, /^svc_live_[0-9A-Za-z]{40}$/);
    assert.match(merchant.test, /^svc_test_[0-9A-Za-z]{40}$/);
    assert.match(merchant.sandbox, /^svc_sandbox_[0-9A-Za-z]{40}$/);
    assert.match(merchant.webhook_secret, /^whsec_/);
  });
});

describe('configuration', () => {
  it('names the variable that is wrong', () => {
    assert.throws(
      () => loadConfig({ PORT: 'abc' }),
      (error: Error) => error instanceof ConfigError && /PORT/.test(error.message),
    );
    assert.throws(() => loadConfig({ ROLES: 'api,web' }), /ROLES/);
    assert.throws(() => loadConfig({ DATABASE_URL: 'mysql://x' }), /DATABASE_URL/);
    assert.throws(() => loadConfig({ RECEIPT_VALIDATOR: 'easyslip' }), /EASYSLIP_BASE_URL/);
    assert.throws(
      () => loadConfig({ GATEWAY_DISPUTE_AUTO_OPEN_ENABLED: 'maybe' }),
      /GATEWAY_DISPUTE_AUTO_OPEN_ENABLED/,
    );
    assert.throws(() => loadConfig({ ADMIN_SERVICE_TOKEN: 'short' }), /ADMIN_SERVICE_TOKEN/);
    assert.throws(() => loadConfig({ RECEIVER_CONFIRM_MAX_ATTEMPTS: '0' }), /RECEIVER_CONFIRM_MAX_ATTEMPTS/);
  });

  it('has the documented defaults', () => {
    const config = loadConfig({});
    assert.equal(config.port, 3000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.public_base_url, 'http://localhost:3000');
    assert.deepEqual([...config.roles].sort(), ['api', 'ledger', 'worker']);
    // The slip QR check by rail (THB), not null_validator: the default approves nothing without a slip QR.
    assert.equal(config.receipt_validator, 'slip_qr');
    assert.equal(loadConfig({ RECEIPT_VALIDATOR: 'null_validator' }).receipt_validator, 'null_validator');
    assert.equal(config.receiver_confirm_max_attempts, 5);
    assert.equal(config.pending_funds_ttl_hours, 72);
    assert.equal(config.receiver_confirm_window_hours, 24);
    assert.equal(config.sell_order_pending_ttl_hours, 24);
    assert.equal(config.cash_leg_retry_max, 5);
    assert.equal(config.cash_leg_retry_timeout_hours, 48);
    assert.equal(config.gateway_dispute_auto_open_enabled, false);
    assert.equal(config.rate_limit_live_per_second, 100);
    assert.equal(config.rate_limit_sandbox_per_second, 25);
  });

  it('stops the process with exit code 2 and the variable named', () => {
    const result = spawnSync(process.execPath, ['src/main.ts'], {
      env: { ...process.env, PORT: 'not-a-port', DATABASE_URL: '' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /invalid configuration: PORT must be an integer/);
  });
});
