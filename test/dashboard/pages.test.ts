import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { addUser, signIn, type Browser } from './helpers.ts';

describe('dashboard roles, pages and the services behind them', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let other: TestMerchant;
  let owner: Browser;
  let viewer: Browser;
  let finance: Browser;
  let developer: Browser;

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Roles Shop');
    other = await t.createMerchant('Other Shop');
    for (const role of ['owner', 'viewer', 'finance', 'developer'])
      await addUser(t, merchant.id, `${role}@roles.example`, role);
    owner = await signIn(t, 'owner@roles.example');
    viewer = await signIn(t, 'viewer@roles.example');
    finance = await signIn(t, 'finance@roles.example');
    developer = await signIn(t, 'developer@roles.example');
  });
  after(() => t.close());

  const liveKeyId = async () =>
    (
      await t.db
        .selectFrom('api_keys')
        .select('id')
        .where('merchant_id', '=', merchant.id)
        .where('kind', '=', 'live')
        .where('revoked_at', 'is', null)
        .executeTakeFirstOrThrow()
    ).id;

  it('a dashboard session on the /v1 merchant routes keeps its role: viewer and developer read, only money roles write', async () => {
    const sell = {
      amount_micro_pay: 1_000_000,
      currency: 'PAY',
      target_currency: 'THB',
      target_fiat_amount: 3_500,
      payout_destination: { rail: 'promptpay', promptpay_id: '0812345678' },
    };
    const call = (browser: Browser, method: 'GET' | 'POST', url: string) =>
      t.request({
        method,
        url,
        headers: { cookie: browser.cookie, 'idempotency-key': crypto.randomUUID() },
        ...(method === 'POST' ? { payload: sell } : {}),
      });
    for (const browser of [viewer, developer]) {
      assert.equal((await call(browser, 'GET', '/v1/merchant-sell-orders')).statusCode, 200);
      const refused = await call(browser, 'POST', '/v1/merchant-sell-orders');
      assert.equal(refused.statusCode, 403, refused.body);
      assert.equal(refused.json().error.code, 'FORBIDDEN');
    }
    assert.equal(
      await t.db
        .selectFrom('sell_orders')
        .select('id')
        .where('merchant_id', '=', merchant.id)
        .execute()
        .then((rows) => rows.length),
      0,
      'nothing was written',
    );
    // Finance passes the role check (and then meets the business rule: no PAY to sell yet).
    const allowed = await call(finance, 'POST', '/v1/merchant-sell-orders');
    assert.equal(allowed.statusCode, 409, allowed.body);
    assert.equal(allowed.json().error.code, 'SELL_ORDER_INSUFFICIENT_BALANCE');
  });

  it('every role reads every page; a viewer sees no forms that change anything', async () => {
    for (const browser of [owner, viewer, finance, developer]) {
      for (const url of [
        '/dashboard',
        '/dashboard/payments',
        '/dashboard/balance',
        '/dashboard/settlements',
        '/dashboard/developers',
        '/dashboard/account',
      ]) {
        const response = await browser.get(url);
        assert.equal(response.statusCode, 200, `${url}: ${response.body.slice(0, 200)}`);
      }
    }
    const developers = await viewer.get('/dashboard/developers');
    assert.doesNotMatch(developers.body, /roll-key|create-endpoint|rotate-secret/);
    assert.doesNotMatch((await viewer.get('/dashboard/balance')).body, /create-sell/);
    assert.match((await owner.get('/dashboard/developers')).body, /roll-key/);
  });

  it('a viewer cannot roll a key (403 page, key unchanged); finance cannot either; a developer can', async () => {
    const key_id = await liveKeyId();
    const refused = await viewer.post(`/dashboard/api-keys/${key_id}/roll`, { grace_hours: '1', confirm: 'yes' });
    assert.equal(refused.statusCode, 403);
    assert.match(refused.body, /Your role \(viewer\) cannot do this/);
    assert.equal(
      (await finance.post(`/dashboard/api-keys/${key_id}/roll`, { grace_hours: '1', confirm: 'yes' })).statusCode,
      403,
    );
    assert.equal(await liveKeyId(), key_id, 'nothing rolled');
    assert.equal(
      (await viewer.post('/dashboard/webhook-endpoints', { url: 'https://shop.example/hook' })).statusCode,
      403,
    );
    assert.equal(
      (
        await developer.post('/dashboard/sell-orders', {
          amount_pay: '1',
          target_currency: 'THB',
          target_amount: '35.00',
        })
      ).statusCode,
      403,
    );
    assert.equal(
      (await viewer.post('/dashboard/mode', { mode: 'sandbox' })).statusCode,
      303,
      'a viewer may still switch the view',
    );
    await viewer.post('/dashboard/mode', { mode: 'live' });

    const rolled = await developer.post(`/dashboard/api-keys/${key_id}/roll`, { grace_hours: '2', confirm: 'yes' });
    assert.equal(rolled.statusCode, 200, rolled.body.slice(0, 300));
    const new_key = /id="new-key">(svc_live_[0-9A-Za-z]+)</.exec(rolled.body)?.[1];
    assert.ok(new_key, 'the new key is shown once');
    assert.doesNotMatch((await developer.get('/dashboard/developers')).body, new RegExp(new_key), 'and never again');
    // The old key keeps working through the grace period, then stops; the new one works.
    assert.equal((await t.call('GET', '/v1/payments', merchant.live)).statusCode, 200);
    assert.equal((await t.call('GET', '/v1/payments', new_key)).statusCode, 200);
    t.clock.advance(2 * 3600_000);
    assert.equal((await t.call('GET', '/v1/payments', merchant.live)).statusCode, 401);
    assert.equal((await t.call('GET', '/v1/payments', new_key)).statusCode, 200);
    // Sessions were idle for two hours: sign in again.
    owner = await signIn(t, 'owner@roles.example');
    viewer = await signIn(t, 'viewer@roles.example');
    finance = await signIn(t, 'finance@roles.example');
    developer = await signIn(t, 'developer@roles.example');
    const again = await developer.post(`/dashboard/api-keys/${key_id}/roll`, { grace_hours: '1', confirm: 'yes' });
    assert.equal(again.statusCode, 403, 'a rolled key does not roll twice');
    // A roll with no grace ends the old key at once, although this process had just cached it.
    const new_key_id = await liveKeyId();
    assert.equal((await t.call('GET', '/v1/payments', new_key)).statusCode, 200);
    assert.equal(
      (await developer.post(`/dashboard/api-keys/${new_key_id}/roll`, { grace_hours: '0', confirm: 'yes' })).statusCode,
      200,
    );
    assert.equal((await t.call('GET', '/v1/payments', new_key)).statusCode, 401);
    const foreign = (
      await t.db.selectFrom('api_keys').select('id').where('merchant_id', '=', other.id).executeTakeFirstOrThrow()
    ).id;
    assert.equal(
      (await owner.post(`/dashboard/api-keys/${foreign}/roll`, { grace_hours: '1', confirm: 'yes' })).statusCode,
      404,
      "another merchant's key is not found",
    );
  });

  it('payments: simulate in sandbox, the list keeps modes apart, search by order id, CSV export, merchant text escaped', async () => {
    assert.equal(
      (
        await owner.post('/dashboard/payments/simulate', {
          scenario: 'matched_then_completed',
          amount: '10.00',
          currency: 'THB',
        })
      ).statusCode,
      403,
      'simulate is sandbox-only',
    );
    await owner.post('/dashboard/mode', { mode: 'sandbox' });
    const simulated = await owner.post('/dashboard/payments/simulate', {
      scenario: 'matched_then_completed',
      amount: '12.34',
      currency: 'THB',
      order_id: '=cmd|"<script>alert(1)</script>',
    });
    assert.equal(simulated.statusCode, 303, simulated.body.slice(0, 400));
    const id = /\/dashboard\/payments\/(sbx_[0-9a-f-]{36})/.exec(String(simulated.headers.location))?.[1];
    assert.ok(id);
    const list = await owner.get('/dashboard/payments');
    assert.match(list.body, new RegExp(id));
    assert.ok(list.body.includes('=cmd|&quot;&lt;script&gt;alert(1)&lt;/script&gt;'), 'the order id is escaped');
    assert.ok(!list.body.includes('<script>alert(1)'), 'never raw');
    const found = await owner.get(`/dashboard/payments?q=${encodeURIComponent('=cmd|"<script>alert(1)</script>')}`);
    assert.equal(found.statusCode, 303);
    assert.equal(found.headers.location, `/dashboard/payments/${id}`);
    const detail = await owner.get(`/dashboard/payments/${id}`);
    assert.equal(detail.statusCode, 200);
    assert.match(detail.body, /payment\.completed/);
    const csv = await owner.get('/dashboard/payments/export.csv?status=completed');
    assert.equal(csv.statusCode, 200);
    assert.match(String(csv.headers['content-disposition']), /attachment; filename="payments-sandbox.csv"/);
    const lines = csv.body.trim().split('\r\n');
    assert.equal(lines[0], 'id,order_id,status,currency,amount_minor,amount,created_at,completed_at,failure_reason');
    assert.equal(lines.length, 2);
    assert.ok(
      lines[1]!.startsWith(`${id},"'=cmd|""<script>alert(1)</script>",completed,THB,1234,12.34,`),
      `formula-safe CSV: ${lines[1]}`,
    );
    // The live view does not show the sandbox payment, and another merchant cannot open it.
    await owner.post('/dashboard/mode', { mode: 'live' });
    assert.doesNotMatch((await owner.get('/dashboard/payments')).body, new RegExp(id));
    assert.equal((await owner.get(`/dashboard/payments/${id}`)).statusCode, 404);
    await addUser(t, other.id, 'owner@other.example', 'owner');
    const stranger = await signIn(t, 'owner@other.example');
    await stranger.post('/dashboard/mode', { mode: 'sandbox' });
    assert.equal((await stranger.get(`/dashboard/payments/${id}`)).statusCode, 404);
    const missing = await owner.get('/dashboard/payments?q=no-such-order');
    assert.equal(missing.statusCode, 404);
  });

  it("settlements: the settlement_cycle scenario's batch, its fee arithmetic and CSV", async () => {
    await finance.post('/dashboard/mode', { mode: 'sandbox' });
    await owner.post('/dashboard/mode', { mode: 'sandbox' });
    const run = await owner.post('/dashboard/payments/simulate', {
      scenario: 'settlement_cycle',
      amount: '1000.00',
      currency: 'THB',
    });
    assert.equal(run.statusCode, 303);
    const list = await finance.get('/dashboard/settlements');
    const batch = /\/dashboard\/settlements\/([0-9a-f-]{36})"/.exec(list.body)?.[1];
    assert.ok(batch, list.body.slice(0, 500));
    const detail = await finance.get(`/dashboard/settlements/${batch}`);
    assert.match(detail.body, /Gross 1,000\.00 THB − fee \d[\d,.]* THB \(\d+ bps\) = net [\d,.]+ THB/);
    const csv = await finance.get(`/dashboard/settlements/${batch}/export.csv`);
    assert.equal(csv.statusCode, 200);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    assert.match(csv.body, /^payment_id,order_id,currency,amount_minor,amount,fee_minor,fee,net_minor,net/);
    assert.match(csv.body, /,THB,100000,1000\.00,/);
  });

  it('webhooks from the developers page: create an endpoint (secret once), rotate, roles enforced', async () => {
    await developer.post('/dashboard/mode', { mode: 'sandbox' });
    const created = await developer.post('/dashboard/webhook-endpoints', {
      url: 'http://127.0.0.1:9/hook',
      enabled_events: 'payment.completed, payment.failed',
      description: 'shop',
    });
    assert.equal(created.statusCode, 201, created.body.slice(0, 500));
    const secret = /id="endpoint-secret">(whsec_[^<]+)</.exec(created.body)?.[1];
    assert.ok(secret);
    const endpoint = await t.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('merchant_id', '=', merchant.id)
      .where('url', '=', 'http://127.0.0.1:9/hook')
      .executeTakeFirstOrThrow();
    assert.deepEqual(endpoint.enabled_events, ['payment.completed', 'payment.failed']);
    const rotated = await developer.post(`/dashboard/webhook-endpoints/${endpoint.id}/rotate`);
    assert.equal(rotated.statusCode, 200);
    const next = /id="endpoint-secret">(whsec_[^<]+)</.exec(rotated.body)?.[1];
    assert.ok(next && next !== secret);
    assert.equal((await viewer.post(`/dashboard/webhook-endpoints/${endpoint.id}/rotate`)).statusCode, 403);
    // Reveal shows the current (newest) secret to a developer, never to a viewer or another merchant's session.
    const revealed = await developer.post(`/dashboard/webhook-endpoints/${endpoint.id}/reveal`);
    assert.equal(revealed.statusCode, 200);
    assert.equal(/id="endpoint-secret">(whsec_[^<]+)</.exec(revealed.body)?.[1], next);
    const peek = await viewer.post(`/dashboard/webhook-endpoints/${endpoint.id}/reveal`);
    assert.equal(peek.statusCode, 403);
    assert.doesNotMatch(peek.body, /whsec_/);
    await developer.post('/dashboard/mode', { mode: 'live' });
    assert.equal(
      (await developer.post(`/dashboard/webhook-endpoints/${endpoint.id}/reveal`)).statusCode,
      404,
      'a sandbox endpoint is not visible from the live view',
    );
    await developer.post('/dashboard/mode', { mode: 'sandbox' });
    const bad = await developer.post('/dashboard/webhook-endpoints', { url: 'not a url' });
    assert.equal(bad.statusCode, 400);
  });

  it("sell orders from the balance page: a bad amount is 400 with no row; PAY shortfall is the API's 409", async () => {
    const before_count = await t.db
      .selectFrom('sell_orders')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    const bad = await finance.post('/dashboard/sell-orders', {
      amount_pay: '1.1234567',
      target_currency: 'THB',
      target_amount: '35.00',
    });
    assert.equal(bad.statusCode, 400);
    // More PAY than the merchant holds (its sandbox payments above credited it some).
    const short = await finance.post('/dashboard/sell-orders', {
      amount_pay: '50000',
      target_currency: 'THB',
      target_amount: '1750000.00',
      payout_rail: 'promptpay',
      promptpay_id: '0812345678',
    });
    assert.equal(short.statusCode, 409);
    assert.match(short.body, /error-message/);
    const after_count = await t.db
      .selectFrom('sell_orders')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(after_count.n, before_count.n);
  });

  it('static assets come from the packages with no CDN; unknown names are 404', async () => {
    const htmx = await t.request({ method: 'GET', url: '/dashboard/assets/htmx.min.js' });
    assert.equal(htmx.statusCode, 200);
    assert.match(String(htmx.headers['content-type']), /javascript/);
    assert.equal((await t.request({ method: 'GET', url: '/dashboard/assets/..%2F..%2Fpackage.json' })).statusCode, 404);
    const home = await owner.get('/dashboard');
    assert.doesNotMatch(home.body, /https?:\/\/(?!gateway\.test)[a-z]/i, 'no third-party URL in the page');
  });
});
