import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SDK_DOCUMENT_BASE_URL, staleFiles } from '../../../scripts/generate-sdk.ts';
import { signedHeaders } from '../../../src/modules/webhooks/signing.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../../../test/helpers/app.ts';
import { MpayApiError, MpayClient, verifyWebhook, WebhookVerificationError, type Payment, type WebhookEvent } from '../src/index.ts';

const trade = (order_id: string) => ({ order_id, amount: '100.00', currency: 'THB' as const, return_url: 'https://shop.example/done' });

describe('@mpay/client against a running server', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let base_url: string;
  let client: MpayClient;
  before(async () => {
    t = await startTestApp();
    base_url = await t.application.app.listen({ port: 0, host: '127.0.0.1' });
    merchant = await t.createMerchant('SDK Shop');
    await t.createSeller(thbSeller(100_000_000, '35.00'));
    client = new MpayClient({ baseUrl: base_url, apiKey: merchant.live });
  });
  after(() => t.close());

  it('creates, reads and replays a trade through named, typed methods', async () => {
    const created = await client.payments.create(trade('sdk-1'), { idempotencyKey: 'sdk-key-1' });
    const payment: Payment = created.data;
    assert.equal(payment.order_id, 'sdk-1');
    assert.equal(payment.amount, 10_000);
    const replayed = await client.operations.createTrade({ body: trade('sdk-1'), idempotencyKey: 'sdk-key-1' });
    assert.equal(replayed.data.id, payment.id);
    const read = await client.payments.get(payment.id);
    assert.equal(read.data.status, payment.status);
    assert.equal((await t.db.selectFrom('payments').select('id').where('order_id', '=', 'sdk-1').execute()).length, 1);
  });

  it('throws typed errors carrying code, status and request_id', async () => {
    const missing = await client.payments.get('00000000-0000-4000-8000-000000000000').catch((error: unknown) => error);
    assert.ok(missing instanceof MpayApiError);
    assert.equal(missing.status, 404);
    assert.equal(missing.code, 'NOT_FOUND');
    assert.match(missing.request_id ?? '', /^[0-9a-f-]{36}$/);
    const anonymous = new MpayClient({ baseUrl: base_url });
    const unauthorized = await anonymous.payments.get('00000000-0000-4000-8000-000000000000').catch((error: unknown) => error);
    assert.ok(unauthorized instanceof MpayApiError);
    assert.deepEqual([unauthorized.status, unauthorized.code], [401, 'UNAUTHORIZED']);
  });

  it('iterates every page of a list with for await', async () => {
    const other = await t.createMerchant('SDK Pager');
    const pager = new MpayClient({ baseUrl: base_url, apiKey: other.live });
    const ids = new Set<string>();
    for (let n = 0; n < 5; n += 1) ids.add((await pager.payments.create(trade(`page-${n}`))).data.id);
    const seen: string[] = [];
    for await (const payment of pager.payments.list({ limit: 2 })) seen.push(payment.id);
    assert.equal(seen.length, 5);
    assert.deepEqual(new Set(seen), ids);
  });

  it('retries 429 and 5xx with the same Idempotency-Key, honouring Retry-After', async () => {
    const keys: (string | null)[] = [];
    const waits: number[] = [];
    let calls = 0;
    const flaky: typeof fetch = async (input, init) => {
      calls += 1;
      keys.push(new Headers(init?.headers).get('idempotency-key'));
      if (calls === 1) return new Response('{"success":false,"error":{"code":"RATE_LIMITED","message":"slow down","details":[]}}', { status: 429, headers: { 'retry-after': '2', 'content-type': 'application/json' } });
      if (calls === 2) return new Response('{"success":false,"error":{"code":"INTERNAL","message":"boom","details":[]}}', { status: 503, headers: { 'content-type': 'application/json' } });
      return fetch(input, init);
    };
    const retrying = new MpayClient({ baseUrl: base_url, apiKey: merchant.live, fetch: flaky, retryBaseDelayMs: 100, sleep: async (ms) => void waits.push(ms) });
    const created = await retrying.payments.create(trade('sdk-retry'));
    assert.equal(created.data.order_id, 'sdk-retry');
    assert.equal(calls, 3);
    assert.equal(waits[0], 2000);
    assert.ok(waits[1]! >= 50 && waits[1]! <= 200, `backoff ${waits[1]}`);
    assert.match(keys[0] ?? '', /^[0-9a-f-]{36}$/);
    assert.deepEqual(new Set(keys).size, 1);

    const exhausted = new MpayClient({ baseUrl: base_url, apiKey: merchant.live, maxRetries: 1, fetch: async () => new Response('{"success":false,"error":{"code":"RATE_LIMITED","message":"x","details":[]}}', { status: 429, headers: { 'retry-after': '1', 'x-request-id': 'req-1', 'content-type': 'application/json' } }), sleep: async () => {} });
    const error = await exhausted.payments.get('00000000-0000-4000-8000-000000000000').catch((caught: unknown) => caught);
    assert.ok(error instanceof MpayApiError);
    assert.deepEqual([error.status, error.code, error.request_id], [429, 'RATE_LIMITED', 'req-1']);
  });

  it('verifies webhooks (Standard Webhooks and X-Service-Signature) into typed events', async () => {
    const payment_id = (await client.payments.create(trade('sdk-webhook'))).data.id;
    const row = await t.db.selectFrom('events').select(['id', 'payload']).where('resource_id', '=', payment_id).where('type', '=', 'payment.matched').executeTakeFirstOrThrow();
    const body = typeof row.payload === 'string' ? row.payload : JSON.stringify(row.payload);
    const now = new Date();
    const headers = signedHeaders(merchant.webhook_secret, row.id, Math.floor(now.getTime() / 1000), body);
    const event: WebhookEvent = verifyWebhook(body, headers, merchant.webhook_secret, { now });
    assert.equal(event.type, 'payment.matched');
    if (event.type === 'payment.matched') assert.equal(event.data.order_id, 'sdk-webhook');
    assert.throws(() => verifyWebhook(body.replace('sdk-webhook', 'sdk-forged'), headers, merchant.webhook_secret, { now }), WebhookVerificationError);
  });

  it('is generated from the current document (else: ./run sdk:generate)', async () => {
    const document = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
    assert.deepEqual(await staleFiles({ ...document, servers: [{ url: SDK_DOCUMENT_BASE_URL }] }), []);
    // And the check notices a change of the document.
    document.paths['/v1/payments/{id}'].get.operationId = 'renamedForTheTest';
    assert.deepEqual(await staleFiles(document), ['schema.d.ts', 'operations.ts']);
  });
});
