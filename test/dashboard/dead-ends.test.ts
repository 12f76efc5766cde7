import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { addUser, signIn, type Browser } from './helpers.ts';

/** Every refusal is a page in the person's language that links back; a refused form keeps what was typed. */
describe('dashboard: no dead ends', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let owner: Browser;
  let thai: Browser;

  before(async () => {
    t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' } });
    merchant = await t.createMerchant('Dead Ends Shop');
    await addUser(t, merchant.id, 'owner@dead-ends.example', 'owner');
    await addUser(t, merchant.id, 'thai@dead-ends.example', 'owner');
    owner = await signIn(t, 'owner@dead-ends.example');
    const signed = await signIn(t, 'thai@dead-ends.example');
    const cookie = `${signed.cookie}; mpay_lang=th`;
    thai = {
      ...signed,
      cookie,
      get: (url) => t.request({ method: 'GET', url, headers: { cookie } }),
      post: (url, values = {}) =>
        t.request({
          method: 'POST',
          url,
          payload: new URLSearchParams({ _csrf: signed.csrf, ...values }).toString(),
          headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        }),
    };
  });
  after(() => t.close());

  const isPage = (response: { headers: Record<string, unknown>; body: string }) => {
    assert.match(String(response.headers['content-type']), /^text\/html/);
    assert.match(response.body, /id="error-message"/);
  };

  it('malformed and unknown ids are 404 pages with a way back, never 500 or JSON', async () => {
    for (const url of [
      '/dashboard/disputes/not-a-uuid',
      '/dashboard/settlements/not-a-uuid',
      '/dashboard/settlements/not-a-uuid/export.csv',
      '/dashboard/payments/not-a-payment',
      '/dashboard/payments/00000000-0000-4000-8000-000000000000',
      '/dashboard/disputes/00000000-0000-4000-8000-000000000000',
      '/dashboard/settlements/00000000-0000-4000-8000-000000000000',
    ]) {
      const response = await owner.get(url);
      assert.equal(response.statusCode, 404, `${url}: ${response.body.slice(0, 300)}`);
      isPage(response);
      assert.match(response.body, /id="error-back"/);
    }
    for (const url of [
      '/dashboard/sell-orders/x/cancel',
      '/dashboard/webhook-endpoints/%27/rotate',
      '/dashboard/webhook-deliveries/1/redeliver',
      '/dashboard/api-keys/zzz/roll',
    ]) {
      const response = await owner.post(url);
      assert.equal(response.statusCode, 404, `${url}: ${response.body.slice(0, 300)}`);
      isPage(response);
    }
  });

  it("an unknown /dashboard path is an HTML 404 in the person's language, signed in or not", async () => {
    const english = await owner.get('/dashboard/no-such-page');
    assert.equal(english.statusCode, 404);
    isPage(english);
    assert.match(english.body, /There is no such page or record/);
    const th = await thai.get('/dashboard/no/such/page?x=1');
    assert.equal(th.statusCode, 404);
    assert.match(th.body, /ไม่พบหน้าหรือรายการนี้/);
    assert.match(th.body, /<html lang="th">/);
    const anonymous = await t.request({ method: 'POST', url: '/dashboard/nowhere' });
    assert.equal(anonymous.statusCode, 404);
    isPage(anonymous);
  });

  it('the dispute form with a malformed sell order id is a 404 on the balance page, the notes kept', async () => {
    const response = await owner.post('/dashboard/disputes', {
      sell_order_id: 'not-a-uuid',
      notes: 'the cash never came',
    });
    assert.equal(response.statusCode, 404, response.body.slice(0, 300));
    isPage(response);
    assert.match(response.body, /value="the cash never came"/);
    assert.match(response.body, /There is no sell order with this id/);
  });

  it('a simulated amount typed 1,250.00 is accepted; a bad one is answered inline in Thai with the input kept', async () => {
    assert.equal((await owner.post('/dashboard/mode', { mode: 'sandbox' })).statusCode, 303);
    const accepted = await owner.post('/dashboard/payments/simulate', {
      scenario: 'matched_then_completed',
      amount: '1,250.00',
      currency: 'THB',
      order_id: 'grouped-1',
    });
    assert.equal(accepted.statusCode, 303, accepted.body.slice(0, 400));
    const payment = await t.db
      .selectFrom('payments')
      .select(['amount_minor'])
      .where('order_id', '=', 'grouped-1')
      .executeTakeFirstOrThrow();
    assert.equal(Number(payment.amount_minor), 125_000);

    assert.equal((await thai.post('/dashboard/mode', { mode: 'sandbox' })).statusCode, 303);
    const refused = await thai.post('/dashboard/payments/simulate', {
      scenario: 'matched_then_completed',
      amount: '12,50.0',
      currency: 'THB',
      order_id: 'kept-order',
    });
    assert.equal(refused.statusCode, 400);
    isPage(refused);
    assert.match(refused.body, /จำนวนเงินไม่ถูกต้อง/);
    assert.match(refused.body, /id="sim-order"[^>]*value="kept-order"/);
    assert.match(refused.body, /id="sim-amount"[^>]*value="12,50.0"/);
    assert.equal(
      await t.db.selectFrom('payments').select('id').where('order_id', '=', 'kept-order').executeTakeFirst(),
      undefined,
    );
  });

  it('a refused webhook URL is answered inline on the developers page with the form as typed', async () => {
    const response = await thai.post('/dashboard/webhook-endpoints', {
      url: 'https://10.1.2.3/hook',
      enabled_events: 'payment.completed',
      description: 'my shop',
    });
    assert.equal(response.statusCode, 400, response.body.slice(0, 300));
    isPage(response);
    assert.match(response.body, /ใช้ URL นี้เป็นปลายทางเว็บฮุกไม่ได้/);
    assert.match(response.body, /id="endpoint-url"[^>]*value="https:\/\/10.1.2.3\/hook"/);
    assert.match(response.body, /id="endpoint-description"[^>]*value="my shop"/);
    const rows = await t.db
      .selectFrom('webhook_endpoints')
      .select('id')
      .where('merchant_id', '=', merchant.id)
      .execute();
    assert.equal(rows.length, 0);
  });

  it("a refused CSRF token, an unreadable body and a forbidden role are pages too, in the page's language", async () => {
    const csrf = await thai.post('/dashboard/sell-orders', { _csrf: 'wrong', amount_pay: '1' });
    assert.equal(csrf.statusCode, 403);
    assert.match(csrf.body, /โทเคนความปลอดภัย/);
    const unreadable = await t.request({
      method: 'POST',
      url: '/dashboard/sell-orders',
      payload: '{"a":',
      headers: { cookie: owner.cookie, 'content-type': 'application/json' },
    });
    assert.ok(unreadable.statusCode >= 400 && unreadable.statusCode < 500, String(unreadable.statusCode));
    isPage(unreadable);
    const multipart = await t.request({
      method: 'POST',
      url: '/dashboard/pending-funds/00000000-0000-4000-8000-000000000000/confirm',
      payload: '--X\r\nbroken\r\n\r\n',
      headers: { cookie: owner.cookie, 'content-type': 'multipart/form-data; boundary=X' },
    });
    assert.equal(multipart.statusCode, 400, multipart.body.slice(0, 300));
    isPage(multipart);
  });
});
