import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { scriptedValidator } from '../helpers/validator.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { drainVerdicts, uploadProof } from '../helpers/payments.ts';

describe('payment links: the API, the page, limits counted on completion', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let other: TestMerchant;

  before(async () => {
    // A verification provider's verdicts (the double checks like easyslip): completion is what this file counts.
    t = await startTestApp({ overrides: { validator: scriptedValidator() } });
    merchant = await t.createMerchant('Silk Shop');
    other = await t.createMerchant('Other');
    await t.createSeller(thbSeller(100_000_000));
  });
  after(() => t.close());

  async function newLink(body: Record<string, unknown> = {}, key = merchant.live) {
    const response = await t.call('POST', '/v1/payment-links', key, {
      title: 'Silk scarf',
      currency: 'THB',
      amount: 45_000,
      ...body,
    });
    assert.equal(response.statusCode, 201, response.body);
    return response.json().data as Record<string, any>;
  }
  const linkCount = async () =>
    Number(
      (
        await t.db
          .selectFrom('payment_links')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const paymentsOf = async (link_id: string) =>
    t.db.selectFrom('payments').selectAll().where('payment_link_id', '=', link_id).orderBy('created_at').execute();
  const usePage = (id: string, form: Record<string, string> = {}, query = '') =>
    t.request({
      method: 'POST',
      url: `/pay/${id}${query}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(form).toString(),
    });
  async function payFromLink(id: string, form: Record<string, string> = {}): Promise<string> {
    const response = await usePage(id, form);
    assert.equal(response.statusCode, 303, response.body);
    const match = /^\/checkout\/([^?]+)/.exec(String(response.headers.location));
    assert.ok(match, String(response.headers.location));
    return match[1]!;
  }
  const read = async (id: string, key = merchant.live) =>
    (await t.call('GET', `/v1/payment-links/${id}`, key)).json().data;

  it('creates a fixed-amount link (minor units or a decimal string) with its url, state and payment_link.created', async () => {
    const link = await newLink({ description: 'Hand-woven', metadata: { sku: 'S-1' } });
    assert.match(link.id, /^plink_[0-9a-f]{32}$/);
    assert.equal(link.url, `http://gateway.test/pay/${link.id}`);
    assert.equal(link.amount, 45_000);
    assert.equal(link.amount_decimal, '450.00');
    assert.equal(link.amount_range, null);
    assert.equal(link.reusable, false);
    assert.equal(link.max_payments, null);
    assert.equal(link.payments_completed, 0);
    assert.equal(link.active, true);
    assert.equal(link.state, 'open');
    assert.equal(link.is_sandbox, false);
    assert.deepEqual(link.metadata, { sku: 'S-1' });
    const event = await t.event<{ data: { id: string } }>(link.id, 'payment_link.created');
    assert.equal(event.data.id, link.id);
    const decimal = await newLink({ amount: '99.50' });
    assert.equal(decimal.amount, 9_950);
    const range = await newLink({
      amount: undefined,
      amount_range: { min: '100', max: 100_000 },
      reusable: true,
      max_payments: 3,
    });
    assert.deepEqual(range.amount_range, { min: 10_000, max: 100_000, min_decimal: '100.00', max_decimal: '1000.00' });
    assert.equal(range.amount, null);
    assert.equal(range.max_payments, 3);
  });

  it('refuses bad bodies with 400 VALIDATION_ERROR and writes nothing', async () => {
    const before_count = await linkCount();
    const bad: Record<string, unknown>[] = [
      { amount: undefined },
      { amount_range: { min: 100, max: 200 } },
      { amount: undefined, amount_range: { min: 300, max: 200 } },
      { amount: undefined, amount_range: { min: '1.234', max: 200 } },
      { amount: 0 },
      { amount: '4.505' },
      { max_payments: 2 },
      { reusable: true, max_payments: 0 },
      { expires_at: new Date(t.clock.now().getTime() - 1000).toISOString() },
      { currency: 'EUR' },
      { title: '' },
      { return_url: 'ftp://shop.example' },
      { surprise: true },
    ];
    for (const body of bad) {
      const response = await t.call('POST', '/v1/payment-links', merchant.live, {
        title: 'Silk scarf',
        currency: 'THB',
        amount: 45_000,
        ...body,
      });
      assert.equal(response.statusCode, 400, `${JSON.stringify(body)}: ${response.body}`);
      assert.equal(response.json().error.code, 'VALIDATION_ERROR');
    }
    assert.equal(await linkCount(), before_count);
  });

  it('takes a secret key, a merchant JWT or a session; nothing else (401); a test key makes sandbox links', async () => {
    const body = { title: 'By JWT', currency: 'THB', amount: 100 };
    const by_jwt = await t.request({
      method: 'POST',
      url: '/v1/payment-links',
      headers: { authorization: `Bearer ${merchant.jwt}` },
      payload: body,
    });
    assert.equal(by_jwt.statusCode, 201, by_jwt.body);
    assert.equal(by_jwt.json().data.is_sandbox, false);
    const by_bearer_key = await t.request({
      method: 'GET',
      url: `/v1/payment-links/${by_jwt.json().data.id}`,
      headers: { authorization: `Bearer ${merchant.live}` },
    });
    assert.equal(by_bearer_key.statusCode, 200, by_bearer_key.body);
    const session = await t.admin('POST', `/admin/merchants/${merchant.id}/sessions`, { user_id: 'dash-user' });
    const by_session = await t.request({
      method: 'GET',
      url: '/v1/payment-links',
      headers: { cookie: `mpay_session=${session.json().data.session_token}` },
    });
    assert.equal(by_session.statusCode, 200, by_session.body);
    assert.ok(by_session.json().data.some((link: { id: string }) => link.id === by_jwt.json().data.id));
    for (const headers of [
      {},
      { 'x-api-key': 'svc_live_wrong' },
      { authorization: 'Bearer a.b.c' },
      { cookie: 'mpay_session=forged' },
    ]) {
      const response = await t.request({ method: 'POST', url: '/v1/payment-links', headers, payload: body });
      assert.equal(response.statusCode, 401, JSON.stringify(headers));
      assert.equal(response.json().error.code, 'UNAUTHORIZED');
    }
    const sandbox = await newLink({}, merchant.test);
    assert.equal(sandbox.is_sandbox, true);
  });

  it("reads and lists only the caller's own links in its mode (another merchant's or mode's link is 404), with cursors", async () => {
    const m = await t.createMerchant('Lister');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await newLink({ title: `L${i}` }, m.live)).id);
      t.clock.advance(1000);
    }
    const sandbox = await newLink({}, m.test);
    const first = await t.call('GET', '/v1/payment-links?limit=2', m.live);
    assert.equal(first.statusCode, 200);
    assert.deepEqual(
      first.json().data.map((link: { id: string }) => link.id),
      [ids[2], ids[1]],
    );
    assert.equal(first.json().has_more, true);
    const second = await t.call('GET', `/v1/payment-links?limit=2&cursor=${first.json().next_cursor}`, m.live);
    assert.deepEqual(
      second.json().data.map((link: { id: string }) => link.id),
      [ids[0]],
    );
    assert.equal(second.json().has_more, false);
    const bad_cursor = await t.call('GET', '/v1/payment-links?cursor=nope', m.live);
    assert.equal(bad_cursor.statusCode, 400);
    const sandbox_list = await t.call('GET', '/v1/payment-links', m.test);
    assert.deepEqual(
      sandbox_list.json().data.map((link: { id: string }) => link.id),
      [sandbox.id],
    );
    for (const key of [other.live, m.test, merchant.live]) {
      const response = await t.call('GET', `/v1/payment-links/${ids[0]}`, key);
      assert.equal(response.statusCode, 404);
      assert.equal(response.json().error.code, 'NOT_FOUND');
      const deactivate = await t.call('POST', `/v1/payment-links/${ids[0]}/deactivate`, key);
      assert.equal(deactivate.statusCode, 404);
    }
    assert.equal((await t.call('GET', '/v1/payment-links/plink_nope', m.live)).statusCode, 400);
    assert.equal((await t.call('GET', `/v1/payment-links/${ids[0]}`, undefined)).statusCode, 401);
    await t.call('POST', `/v1/payment-links/${ids[1]}/deactivate`, m.live);
    const active = await t.call('GET', '/v1/payment-links?active=true', m.live);
    assert.deepEqual(
      active.json().data.map((link: { id: string }) => link.id),
      [ids[2], ids[0]],
    );
    const inactive = await t.call('GET', '/v1/payment-links?active=false', m.live);
    assert.deepEqual(
      inactive.json().data.map((link: { id: string }) => link.id),
      [ids[1]],
    );
  });

  it('the page shows the link in Thai or English with its QR; a use makes a payment with payment_link_id and continues to its checkout', async () => {
    const link = await newLink({ title: 'ผ้าไหม <b>', description: 'Hand-woven', metadata: { sku: 'S-2' } });
    const page = await t.request({ method: 'GET', url: `/pay/${link.id}` });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /text\/html/);
    assert.match(page.body, /<html lang="th">/);
    assert.match(page.body, /ชำระเงินให้ Silk Shop/);
    assert.match(page.body, /ผ้าไหม &lt;b&gt;/);
    assert.match(page.body, /฿450\.00 THB/);
    assert.match(page.body, /<img class="qr" id="share-qr" src="data:image\/png;base64,/);
    assert.match(page.body, new RegExp(`value="http://gateway.test/pay/${link.id}"`));
    const english = await t.request({ method: 'GET', url: `/pay/${link.id}?lang=en` });
    assert.match(english.body, /<html lang="en">/);
    assert.match(english.body, /Pay Silk Shop/);
    assert.match(english.body, /Continue to payment/);

    const payment_id = await payFromLink(link.id);
    const payment = (await t.call('GET', `/v1/payments/${payment_id}`, merchant.live)).json().data;
    assert.equal(payment.payment_link_id, link.id);
    assert.equal(payment.amount, 45_000);
    assert.equal(payment.currency, 'THB');
    assert.deepEqual(payment.metadata, { sku: 'S-2' });
    assert.equal(payment.return_url, link.url);
    assert.equal(payment.status, 'matched');
    const listed = await t.call('GET', `/v1/payments?payment_link_id=${link.id}`, merchant.live);
    assert.deepEqual(
      listed.json().data.map((p: { id: string }) => p.id),
      [payment_id],
    );
    const checkout = await t.request({ method: 'GET', url: `/checkout/${payment_id}` });
    assert.equal(checkout.statusCode, 200);
    // an unpaid use does not count: the link stays open
    assert.equal((await read(link.id)).state, 'open');
    assert.equal(
      (await t.request({ method: 'GET', url: '/pay/plink_0123456789abcdef0123456789abcdef' })).statusCode,
      404,
    );
    assert.equal((await t.request({ method: 'GET', url: '/pay/not-a-link' })).statusCode, 404);
  });

  it("a payer-chosen amount is posted in major units and checked against the link's range (400 and no payment otherwise)", async () => {
    const link = await newLink({ amount: undefined, amount_range: { min: '100.00', max: '500.00' }, reusable: true });
    const page = await t.request({ method: 'GET', url: `/pay/${link.id}?lang=en` });
    assert.match(page.body, /name="amount"/);
    assert.match(page.body, /Between ฿100\.00 THB and ฿500\.00 THB/);
    const payment_id = await payFromLink(link.id, { amount: '150.50' });
    const payment = (await t.call('GET', `/v1/payments/${payment_id}`, merchant.live)).json().data;
    assert.equal(payment.amount, 15_050);
    for (const amount of ['99.99', '500.01', 'abc', '', '1.234', '-5']) {
      const response = await usePage(link.id, { amount }, '?lang=en');
      assert.equal(response.statusCode, 400, amount);
      assert.match(response.body, /role="alert"/);
    }
    const out_of_range = await usePage(link.id, { amount: '600' }, '?lang=en');
    assert.match(out_of_range.body, /Enter an amount between ฿100\.00 THB and ฿500\.00 THB/);
    assert.match(out_of_range.body, /value="600"/);
    assert.equal((await paymentsOf(link.id)).length, 1);
  });

  it('deactivation is for good: payment_link.updated once, the page answers 410 and a use makes no payment', async () => {
    const link = await newLink();
    const deactivated = await t.call('POST', `/v1/payment-links/${link.id}/deactivate`, merchant.live);
    assert.equal(deactivated.statusCode, 200, deactivated.body);
    assert.equal(deactivated.json().data.active, false);
    assert.equal(deactivated.json().data.state, 'inactive');
    assert.ok(deactivated.json().data.deactivated_at);
    const again = await t.call('POST', `/v1/payment-links/${link.id}/deactivate`, merchant.live);
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().data.deactivated_at, deactivated.json().data.deactivated_at);
    const updates = await t.db
      .selectFrom('events')
      .select('id')
      .where('resource_id', '=', link.id)
      .where('type', '=', 'payment_link.updated')
      .execute();
    assert.equal(updates.length, 1);
    const page = await t.request({ method: 'GET', url: `/pay/${link.id}?lang=en` });
    assert.equal(page.statusCode, 410);
    assert.match(page.body, /This link is no longer active/);
    assert.doesNotMatch(page.body, /pay-form/);
    assert.equal((await usePage(link.id)).statusCode, 410);
    assert.equal((await paymentsOf(link.id)).length, 0);
  });

  it('an expired link answers 410 and makes no payment (the injected clock)', async () => {
    const link = await newLink({ expires_at: new Date(t.clock.now().getTime() + 60_000).toISOString() });
    assert.equal((await t.request({ method: 'GET', url: `/pay/${link.id}` })).statusCode, 200);
    t.clock.advance(60_000);
    const page = await t.request({ method: 'GET', url: `/pay/${link.id}?lang=en` });
    assert.equal(page.statusCode, 410);
    assert.match(page.body, /This link has expired/);
    assert.equal((await usePage(link.id)).statusCode, 410);
    assert.equal((await paymentsOf(link.id)).length, 0);
    assert.equal((await read(link.id)).state, 'expired');
  });

  it('a single-use link is used up by its first completed payment: then 410 and no payment', async () => {
    const link = await newLink();
    const payment_id = await payFromLink(link.id);
    await uploadProof(t, merchant.live, payment_id);
    await drainVerdicts(t);
    const after_payment = await read(link.id);
    assert.equal(after_payment.payments_completed, 1);
    assert.equal(after_payment.state, 'used_up');
    assert.equal(after_payment.active, true);
    const page = await t.request({ method: 'GET', url: `/pay/${link.id}?lang=en` });
    assert.equal(page.statusCode, 410);
    assert.match(page.body, /This link has been paid/);
    assert.equal((await usePage(link.id)).statusCode, 410);
    assert.equal((await paymentsOf(link.id)).length, 1);
  });

  it("two payers on a single-use link: both payments complete and stay the merchant's, the link counts both", async () => {
    const link = await newLink();
    const first = await payFromLink(link.id);
    const second = await payFromLink(link.id);
    await Promise.all([uploadProof(t, merchant.live, first), uploadProof(t, merchant.live, second)]);
    const verdicts = { ...t.application.payments, validator: t.application.validator };
    const { processProofVerdicts } = await import('../../src/modules/payments/verdicts.ts');
    await Promise.all([processProofVerdicts(verdicts, 1), processProofVerdicts(verdicts, 1)]);
    await drainVerdicts(t);
    for (const id of [first, second]) {
      const payment = (await t.call('GET', `/v1/payments/${id}`, merchant.live)).json().data;
      assert.equal(payment.status, 'completed', id);
      assert.equal(payment.payment_link_id, link.id);
      assert.ok(payment.fee_micro_pay !== null);
      await t.event(id, 'payment.completed');
    }
    const after_both = await read(link.id);
    assert.equal(after_both.payments_completed, 2);
    assert.equal(after_both.state, 'used_up');
  });

  it('a reusable link takes payments until max_payments of them complete; unpaid uses do not count', async () => {
    const link = await newLink({ reusable: true, max_payments: 2 });
    const paid: string[] = [];
    for (let i = 0; i < 2; i++) {
      const unpaid = await payFromLink(link.id);
      assert.ok(unpaid);
      assert.equal((await read(link.id)).state, 'open');
      const id = await payFromLink(link.id);
      await uploadProof(t, merchant.live, id);
      await drainVerdicts(t);
      paid.push(id);
    }
    const used = await read(link.id);
    assert.equal(used.payments_completed, 2);
    assert.equal(used.state, 'used_up');
    assert.equal((await usePage(link.id)).statusCode, 410);
    assert.equal((await paymentsOf(link.id)).length, 4);
    const unlimited = await newLink({ reusable: true });
    for (let i = 0; i < 2; i++) {
      const id = await payFromLink(unlimited.id);
      await uploadProof(t, merchant.live, id);
    }
    await drainVerdicts(t);
    assert.equal((await read(unlimited.id)).payments_completed, 2);
    assert.equal((await read(unlimited.id)).state, 'open');
  });

  it('a sandbox link makes sandbox payments', async () => {
    const link = await newLink({}, merchant.sandbox);
    const page = await t.request({ method: 'GET', url: `/pay/${link.id}?lang=en` });
    assert.match(page.body, /Sandbox: no real money moves/);
    const payment_id = await payFromLink(link.id);
    assert.match(payment_id, /^sbx_/);
    const payment = (await t.call('GET', `/v1/payments/${payment_id}`, merchant.sandbox)).json().data;
    assert.equal(payment.payment_link_id, link.id);
    assert.equal(payment.is_sandbox, true);
  });
});
