import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { SDK_DOCUMENT_BASE_URL, staleFiles } from '../../../scripts/generate-sdk.ts';
import { signedHeaders } from '../../../src/modules/webhooks/signing.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../../../test/helpers/app.ts';
import { uniquePng } from '../../../test/helpers/files.ts';
import { fund, PAY } from '../../../test/helpers/orders.ts';
import {
  Mpay,
  MpayApiError,
  MpayClient,
  verifyWebhook,
  WebhookVerificationError,
  type Payment,
  type SellOrder,
  type WebhookEvent,
} from '../src/index.ts';

const trade = (order_id: string) => ({
  order_id,
  amount: '100.00',
  currency: 'THB' as const,
  return_url: 'https://shop.example/done',
});

/** A fetch that records the path of every request it passes on. */
function recordingFetch(): { fetch: typeof fetch; paths: string[] } {
  const paths: string[] = [];
  return {
    paths,
    fetch: async (input, init) => {
      paths.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
      return fetch(input, init);
    },
  };
}

describe('@mpay/client against a running server', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let base_url: string;
  let mpay: Mpay;
  before(async () => {
    t = await startTestApp();
    base_url = await t.application.app.listen({ port: 0, host: '127.0.0.1' });
    merchant = await t.createMerchant('SDK Shop');
    await t.createSeller(thbSeller(100_000_000, '35.00'));
    mpay = new Mpay({ baseUrl: base_url, apiKey: merchant.live });
  });
  after(() => t.close());

  it('creates, reads and replays a trade through resource methods', async () => {
    const created = await mpay.payments.create(trade('sdk-1'), { idempotencyKey: 'sdk-key-1' });
    const payment: Payment = created.data;
    assert.equal(payment.order_id, 'sdk-1');
    assert.equal(payment.amount, 10_000);
    const replayed = await mpay.request('createTrade', { body: trade('sdk-1'), idempotencyKey: 'sdk-key-1' });
    assert.equal(replayed.data.id, payment.id);
    const read = await mpay.payments.retrieve(payment.id);
    assert.equal(read.data.status, payment.status);
    assert.equal((await mpay.trades.retrieve(payment.id)).data.id, payment.id);
    assert.equal((await t.db.selectFrom('payments').select('id').where('order_id', '=', 'sdk-1').execute()).length, 1);
  });

  it('payment links: create, retrieve, list, deactivate and the payments made from a link', async () => {
    const { data: link } = await mpay.paymentLinks.create({
      title: 'SDK scarf',
      currency: 'THB',
      amount: '450.00',
      metadata: { sku: 'sdk-1' },
    });
    assert.match(link.id, /^plink_/);
    assert.equal(link.amount, 45_000);
    assert.equal(link.state, 'open');
    assert.equal((await mpay.paymentLinks.retrieve(link.id)).data.title, 'SDK scarf');
    const ids: string[] = [];
    for await (const item of mpay.paymentLinks.list({ limit: 1 })) ids.push(item.id);
    assert.ok(ids.includes(link.id));
    const use = await fetch(`${base_url}/pay/${link.id}`, { method: 'POST', redirect: 'manual' });
    assert.equal(use.status, 303);
    const payments = await mpay.paymentLinks.payments(link.id);
    assert.equal(payments.data.length, 1);
    assert.equal(payments.data[0]!.payment_link_id, link.id);
    const deactivated = await mpay.paymentLinks.deactivate(link.id);
    assert.equal(deactivated.data.active, false);
    assert.equal(deactivated.data.state, 'inactive');
  });

  it('finds a payment by its exact order id', async () => {
    const { data: payment } = await mpay.payments.create(trade('sdk-find-1'));
    await mpay.payments.create(trade('sdk-find-10'));
    assert.equal((await mpay.payments.findByOrderId('sdk-find-1'))?.id, payment.id);
    assert.equal(await mpay.payments.findByOrderId('sdk-find'), null);
    const page = await mpay.payments.list({ order_id: 'sdk-find-10' });
    assert.deepEqual(
      page.data.map((row) => row.order_id),
      ['sdk-find-10'],
    );
  });

  it('throws typed errors carrying code, status and request_id', async () => {
    const missing = await mpay.payments
      .retrieve('00000000-0000-4000-8000-000000000000')
      .catch((error: unknown) => error);
    assert.ok(missing instanceof MpayApiError);
    assert.equal(missing.status, 404);
    assert.equal(missing.code, 'NOT_FOUND');
    assert.match(missing.request_id ?? '', /^[0-9a-f-]{36}$/);
    const anonymous = new Mpay({ baseUrl: base_url });
    const unauthorized = await anonymous.payments
      .retrieve('00000000-0000-4000-8000-000000000000')
      .catch((error: unknown) => error);
    assert.ok(unauthorized instanceof MpayApiError);
    assert.deepEqual([unauthorized.status, unauthorized.code], [401, 'UNAUTHORIZED']);
  });

  it('awaits a list for one page and iterates every page with for await', async () => {
    const other = await t.createMerchant('SDK Pager');
    const pager = new Mpay(other.live, { baseUrl: base_url });
    const ids = new Set<string>();
    for (let n = 0; n < 5; n += 1) ids.add((await pager.payments.create(trade(`page-${n}`))).data.id);
    const first = await pager.payments.list({ limit: 2 });
    assert.deepEqual([first.data.length, first.has_more], [2, true]);
    const seen: string[] = [];
    for await (const payment of pager.payments.list({ limit: 2 })) seen.push(payment.id);
    assert.equal(seen.length, 5);
    assert.deepEqual(new Set(seen), ids);
    assert.deepEqual(new Set((await pager.payments.list({ limit: 2 }).toArray()).map((payment) => payment.id)), ids);
  });

  it('reaches the merchant routes with one secret key: one token trade shared by concurrent calls', async () => {
    const shop = await t.createMerchant('SDK Payouts');
    await fund(t, shop.id, 20 * PAY, false);
    const recorder = recordingFetch();
    const client = new Mpay({ baseUrl: base_url, apiKey: shop.live, fetch: recorder.fetch });
    const [balance, sells, disputes, buys] = await Promise.all([
      client.balance.retrieve(),
      client.sellOrders.list(),
      client.disputes.list(),
      client.buyOrders.list(),
    ]);
    assert.equal(balance.data.available_micro_pay, 20 * PAY);
    assert.deepEqual([sells.data.length, disputes.data.length, buys.data.length], [0, 0, 0]);
    const sell: SellOrder = (
      await client.sellOrders.create({
        amount_micro_pay: 2 * PAY,
        currency: 'PAY',
        target_currency: 'THB',
        target_fiat_amount: 7_000,
        payout_destination: { rail: 'promptpay', promptpay_id: '0812345678' },
      })
    ).data;
    const dispute = await client.disputes.create({ sell_order_id: sell.id, notes: 'Opened through the SDK' });
    assert.equal(dispute.data.status, 'opened');
    assert.equal((await client.disputes.retrieve(dispute.data.id)).data.id, dispute.data.id);
    assert.equal((await client.sellOrders.retrieve(sell.id)).data.status, 'pending');
    assert.equal((await client.merchants.me()).data.merchant_id, shop.id);
    assert.equal((await client.balance.retrieve()).data.available_micro_pay, 18 * PAY);
    assert.equal(recorder.paths.filter((path) => path === 'POST /v1/auth/token').length, 1, recorder.paths.join('\n'));
    // Key routes still take the key itself.
    await client.payments.list();
    assert.ok(!recorder.paths.slice(-1)[0]!.includes('/v1/auth/token'));
  });

  it('keeps a sandbox key to the sandbox rows on the merchant routes too', async () => {
    const shop = await t.createMerchant('SDK Sandbox');
    await fund(t, shop.id, 9 * PAY, false);
    await fund(t, shop.id, 3 * PAY, true);
    const live = new Mpay({ baseUrl: base_url, apiKey: shop.live });
    const sandbox = new Mpay({ baseUrl: base_url, apiKey: shop.sandbox });
    assert.equal((await sandbox.balance.retrieve()).data.available_micro_pay, 3 * PAY);
    const order = (
      await sandbox.sellOrders.create({
        amount_micro_pay: PAY,
        currency: 'PAY',
        target_currency: 'THB',
        target_fiat_amount: 3_500,
        payout_destination: { rail: 'promptpay', promptpay_id: '0812345678' },
      })
    ).data;
    assert.equal(order.is_sandbox, true);
    assert.deepEqual((await live.sellOrders.list()).data, []);
    const refused = await live.sellOrders.retrieve(order.id).catch((error: unknown) => error);
    assert.ok(refused instanceof MpayApiError && refused.status === 404);
    assert.equal((await live.balance.retrieve()).data.available_micro_pay, 9 * PAY);
  });

  it('trades again when the token nears its end, and once more when the server stops taking it', async () => {
    const shop = await t.createMerchant('SDK Renewal');
    const recorder = recordingFetch();
    let now_ms = Date.now();
    const client = new Mpay({ baseUrl: base_url, apiKey: shop.live, fetch: recorder.fetch, now: () => now_ms });
    const trades = () => recorder.paths.filter((path) => path === 'POST /v1/auth/token').length;
    await client.disputes.list();
    await client.disputes.list();
    assert.equal(trades(), 1);
    now_ms += 841_000; // the 900 s token has less than its 60 s margin left
    await client.disputes.list();
    assert.equal(trades(), 2);

    t.clock.advance(1500);
    const revoked = await t.admin('POST', `/admin/merchants/${shop.id}/tokens/revoke`);
    assert.equal(revoked.statusCode, 200);
    const after_revocation = await client.disputes.list();
    assert.deepEqual(after_revocation.data, []);
    assert.equal(trades(), 3);

    // A rolled key cannot trade: the error is the exchange's 401, not a loop.
    const rolled = await t.admin('POST', `/admin/merchants/${shop.id}/api-keys/roll`, { kind: 'live' });
    assert.equal(rolled.statusCode, 201);
    const failed = await client.disputes.list().then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.ok(failed instanceof MpayApiError);
    assert.deepEqual([failed.status, failed.code], [401, 'UNAUTHORIZED']);
    assert.equal(trades(), 4);
  });

  it('uses a given merchant JWT as it is, and says what is missing without a credential', async () => {
    await fund(t, merchant.id, PAY, false);
    const with_jwt = new Mpay({ baseUrl: base_url, accessToken: merchant.jwt });
    assert.equal((await with_jwt.balance.retrieve()).data.available_micro_pay, PAY);
    assert.equal((await with_jwt.merchants.me()).data.user_id, `owner:${merchant.id}`);
    const bare = new Mpay({ baseUrl: base_url });
    const missing = await bare.disputes.list().then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.ok(missing instanceof MpayApiError);
    assert.match(missing.message, /apiKey/);
  });

  it('uploads a proof as multipart and reads the PromptPay QR as PNG bytes', async () => {
    const { data: payment } = await mpay.payments.create(trade('sdk-proof'));
    const uploaded = await mpay.payments.uploadProof(
      payment.id,
      new Blob([new Uint8Array(uniquePng())], { type: 'image/png' }),
    );
    assert.equal(uploaded.data.status, 'confirming');
    const png = await mpay.payments.promptPayQr(payment.id);
    assert.ok(png instanceof Uint8Array);
    assert.deepEqual([...png.slice(1, 4)], [...Buffer.from('PNG')]);
    assert.equal((await mpay.payments.checkout(payment.id)).data.payment_id, payment.id);
  });

  it('manages webhook endpoints under resource names', async () => {
    const shop = new Mpay({ baseUrl: base_url, apiKey: (await t.createMerchant('SDK Hooks')).sandbox });
    const created = await shop.webhookEndpoints.create({
      url: 'http://127.0.0.1:9/hook',
      enabled_events: ['payment.completed'],
    });
    const id = created.data.id;
    assert.match(created.data.secret, /^whsec_/);
    assert.equal((await shop.webhookEndpoints.retrieve(id)).data.url, 'http://127.0.0.1:9/hook');
    assert.equal((await shop.webhookEndpoints.update(id, { description: 'local' })).data.description, 'local');
    assert.ok((await shop.webhookEndpoints.list()).data.some((endpoint) => endpoint.id === id));
    assert.notEqual((await shop.webhookEndpoints.rotateSecret(id)).data.secret, created.data.secret);
    await shop.webhookEndpoints.del(id);
    const gone = await shop.webhookEndpoints.retrieve(id).catch((error: unknown) => error);
    assert.ok(gone instanceof MpayApiError && gone.status === 404);
  });

  it('retries 429 and 5xx with the same Idempotency-Key, honouring Retry-After', async () => {
    const keys: (string | null)[] = [];
    const waits: number[] = [];
    let calls = 0;
    const flaky: typeof fetch = async (input, init) => {
      calls += 1;
      keys.push(new Headers(init?.headers).get('idempotency-key'));
      if (calls === 1)
        return new Response('{"success":false,"error":{"code":"RATE_LIMITED","message":"slow down","details":[]}}', {
          status: 429,
          headers: { 'retry-after': '2', 'content-type': 'application/json' },
        });
      if (calls === 2)
        return new Response('{"success":false,"error":{"code":"INTERNAL","message":"boom","details":[]}}', {
          status: 503,
          headers: { 'content-type': 'application/json' },
        });
      return fetch(input, init);
    };
    const retrying = new Mpay({
      baseUrl: base_url,
      apiKey: merchant.live,
      fetch: flaky,
      retryBaseDelayMs: 100,
      sleep: async (ms) => void waits.push(ms),
    });
    const created = await retrying.payments.create(trade('sdk-retry'));
    assert.equal(created.data.order_id, 'sdk-retry');
    assert.equal(calls, 3);
    assert.equal(waits[0], 2000);
    assert.ok(waits[1]! >= 50 && waits[1]! <= 200, `backoff ${waits[1]}`);
    assert.match(keys[0] ?? '', /^[0-9a-f-]{36}$/);
    assert.deepEqual(new Set(keys).size, 1);

    const rate_limited = async () =>
      new Response('{"success":false,"error":{"code":"RATE_LIMITED","message":"x","details":[]}}', {
        status: 429,
        headers: { 'retry-after': '1', 'x-request-id': 'req-1', 'content-type': 'application/json' },
      });
    const exhausted = new MpayClient({
      baseUrl: base_url,
      apiKey: merchant.live,
      maxRetries: 1,
      fetch: rate_limited,
      sleep: async () => {},
    });
    const error = await exhausted.payments
      .retrieve('00000000-0000-4000-8000-000000000000')
      .catch((caught: unknown) => caught);
    assert.ok(error instanceof MpayApiError);
    assert.deepEqual([error.status, error.code, error.request_id], [429, 'RATE_LIMITED', 'req-1']);
  });

  it('verifies webhooks (Standard Webhooks and X-Service-Signature) into typed events', async () => {
    const payment_id = (await mpay.payments.create(trade('sdk-webhook'))).data.id;
    const row = await t.db
      .selectFrom('events')
      .select(['id', 'payload'])
      .where('resource_id', '=', payment_id)
      .where('type', '=', 'payment.matched')
      .executeTakeFirstOrThrow();
    const body = typeof row.payload === 'string' ? row.payload : JSON.stringify(row.payload);
    const now = new Date();
    const headers = signedHeaders(merchant.webhook_secret, row.id, Math.floor(now.getTime() / 1000), body);
    const event: WebhookEvent = verifyWebhook(body, headers, merchant.webhook_secret, { now });
    assert.equal(event.type, 'payment.matched');
    if (event.type === 'payment.matched') assert.equal(event.data.order_id, 'sdk-webhook');
    assert.throws(
      () => verifyWebhook(body.replace('sdk-webhook', 'sdk-forged'), headers, merchant.webhook_secret, { now }),
      WebhookVerificationError,
    );
  });

  it('has a resource method for every merchant operation of the document', async () => {
    const document = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
    const merchant_operations: string[] = [];
    for (const [path, methods] of Object.entries<
      Record<string, { operationId: string; responses: Record<string, { content?: object }> }>
    >(document.paths)) {
      // Pages for a buyer's browser and probes for a load balancer are not an integrator's calls, nor are a seller's
      // own routes (its seller key, not a merchant's).
      if (!path.startsWith('/v1/') || path.startsWith('/v1/seller/')) continue;
      for (const operation of Object.values(methods)) {
        const streams = Object.values(operation.responses).some(
          (response) => response.content && 'text/event-stream' in response.content,
        );
        if (!streams) merchant_operations.push(operation.operationId);
      }
    }
    const source = await readFile(new URL('../src/resources.ts', import.meta.url), 'utf8');
    const covered = new Set([...source.matchAll(/transport\.(?:request|page)\('(\w+)'/g)].map((match) => match[1]));
    const missing = merchant_operations.filter((id) => !covered.has(id));
    assert.deepEqual(
      missing,
      [],
      `add a method for these operations to clients/typescript/src/resources.ts: ${missing.join(', ')}`,
    );
    assert.ok(merchant_operations.length >= 50, `${merchant_operations.length} merchant operations`);
  });

  it("the reference's @mpay/client sample of every operation calls a method the client has", async () => {
    const document = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
    const client = new Mpay({ baseUrl: base_url, apiKey: merchant.live }) as unknown as Record<
      string,
      Record<string, unknown>
    >;
    let checked = 0;
    for (const [path, item] of Object.entries<Record<string, { 'x-codeSamples': { label: string; source: string }[] }>>(
      document.paths,
    )) {
      for (const [method, operation] of Object.entries(item)) {
        const sample = operation['x-codeSamples'].find((entry) => entry.label === '@mpay/client')?.source ?? '';
        const call = /await mpay\.(\w+)(?:\.(\w+))?\(/.exec(sample);
        assert.ok(call, `${method} ${path}: ${sample}`);
        const [, first, second] = call;
        const target = second === undefined ? client[first!] : client[first!]?.[second];
        assert.equal(
          typeof target,
          'function',
          `${method} ${path}: mpay.${first}${second ? `.${second}` : ''} is not a method`,
        );
        checked += 1;
      }
    }
    assert.ok(checked >= 50, `${checked} samples`);
  });

  it('is generated from the current document (else: ./run sdk:generate)', async () => {
    const document = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
    assert.deepEqual(await staleFiles({ ...document, servers: [{ url: SDK_DOCUMENT_BASE_URL }] }), []);
    // And the check notices a change of the document.
    document.paths['/v1/payments/{id}'].get.operationId = 'renamedForTheTest';
    assert.deepEqual(await staleFiles(document), ['schema.ts', 'operations.ts']);
  });
});
