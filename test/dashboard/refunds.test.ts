import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { decodeQr, multipart } from '../helpers/files.ts';
import { completedPayments } from '../helpers/payments.ts';
import { newSlip } from '../helpers/slips.ts';
import { addUser, signIn, type Browser } from './helpers.ts';

const refundIdOf = (location: unknown) =>
  /^\/dashboard\/refunds\/([0-9a-f-]{36})\?notice=done$/.exec(String(location))?.[1];

describe('dashboard: refund from the payment page, refunds list and detail (claim link, QR, cancel, slip)', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let other: TestMerchant;
  let owner: Browser;
  let viewer: Browser;

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Refund Desk');
    other = await t.createMerchant('Other Desk');
    await t.createSeller(thbSeller());
    await addUser(t, merchant.id, 'owner@refund-desk.example', 'owner');
    await addUser(t, merchant.id, 'viewer@refund-desk.example', 'viewer');
    owner = await signIn(t, 'owner@refund-desk.example');
    viewer = await signIn(t, 'viewer@refund-desk.example');
  });
  after(() => t.close());

  const keyOf = (body: string) => /name="_key" value="([0-9a-f-]{36})"/.exec(body)?.[1];

  it('the form defaults to what remains; a double submit makes one refund, shown with its claim link and QR', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'desk-1', amount: 123_450 }]);
    const page = await owner.get(`/dashboard/payments/${payment_id}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /id="refund-form"/);
    assert.match(page.body, /id="refund-amount" name="amount" inputmode="decimal" size="10" value="1234.50"/);
    const key = keyOf(page.body);
    assert.ok(key, 'the form carries a one-time key');

    const values = { _key: key, amount: '1,000.00', reason: 'requested_by_customer', funding: 'merchant_transfer' };
    const [first, second] = await Promise.all([
      owner.post(`/dashboard/payments/${payment_id}/refunds`, values),
      owner.post(`/dashboard/payments/${payment_id}/refunds`, values),
    ]);
    assert.equal(first.statusCode, 303, first.body.slice(0, 300));
    assert.equal(second.statusCode, 303, second.body.slice(0, 300));
    const refund_id = refundIdOf(first.headers.location);
    assert.ok(refund_id);
    assert.equal(refundIdOf(second.headers.location), refund_id);
    const listed = (await t.call('GET', `/v1/refunds?payment_id=${payment_id}`, merchant.live)).json();
    assert.equal(listed.data.length, 1);
    const refund = listed.data[0];
    assert.deepEqual(
      [refund.id, refund.amount, refund.status, refund.reason, refund.funding],
      [refund_id, 100_000, 'requires_action', 'requested_by_customer', 'merchant_transfer'],
    );

    const detail = await owner.get(`/dashboard/refunds/${refund_id}`);
    assert.equal(detail.statusCode, 200);
    assert.match(
      detail.body,
      new RegExp(`id="claim-url" class="mono" type="text" readonly value="${refund.claim_url}"`),
    );
    const qr = /id="claim-qr" src="data:image\/png;base64,([^"]+)"/.exec(detail.body)?.[1];
    assert.ok(qr, 'the claim QR is drawn');
    assert.equal(decodeQr(Buffer.from(qr, 'base64')), refund.claim_url);
    assert.match(detail.body, /data-status="requires_action"/);
    assert.match(detail.body, /id="cancel-refund"/);

    // The payment page lists it, and offers only what remains.
    const again = await owner.get(`/dashboard/payments/${payment_id}`);
    assert.match(again.body, new RegExp(`href="/dashboard/refunds/${refund_id}"`));
    assert.match(again.body, /id="refund-amount" name="amount" inputmode="decimal" size="10" value="234.50"/);
    // Too much: the page again with the message inline, nothing made.
    const over = await owner.post(`/dashboard/payments/${payment_id}/refunds`, {
      _key: crypto.randomUUID(),
      amount: '234.51',
      funding: 'merchant_transfer',
    });
    assert.equal(over.statusCode, 409);
    assert.match(over.body, /id="error-message"/);
    assert.match(over.body, /value="234.51"/);
    const bad = await owner.post(`/dashboard/payments/${payment_id}/refunds`, {
      _key: crypto.randomUUID(),
      funding: 'from_thin_air',
    });
    assert.equal(bad.statusCode, 400);
    assert.equal((await t.call('GET', `/v1/refunds?payment_id=${payment_id}`, merchant.live)).json().data.length, 1);
  });

  it('the refunds list filters by status and pages by cursor; cancel needs its confirmation box', async () => {
    const ids = await completedPayments(t, merchant.live, [
      { order_id: 'desk-list-1', amount: 10_000 },
      { order_id: 'desk-list-2', amount: 20_000 },
    ]);
    const made: string[] = [];
    for (const payment_id of ids) {
      const page = await owner.get(`/dashboard/payments/${payment_id}`);
      const created = await owner.post(`/dashboard/payments/${payment_id}/refunds`, {
        _key: keyOf(page.body)!,
        amount: '',
        reason: '',
        funding: 'merchant_transfer',
      });
      assert.equal(created.statusCode, 303, created.body.slice(0, 300));
      made.push(refundIdOf(created.headers.location)!);
    }
    const [to_cancel, kept] = made as [string, string];
    const unconfirmed = await owner.post(`/dashboard/refunds/${to_cancel}/cancel`, {});
    assert.equal(unconfirmed.statusCode, 400);
    assert.match(unconfirmed.body, /id="cancel-refund"/);
    const canceled = await owner.post(`/dashboard/refunds/${to_cancel}/cancel`, { confirm: 'yes' });
    assert.equal(canceled.statusCode, 303);
    assert.equal((await t.call('GET', `/v1/refunds/${to_cancel}`, merchant.live)).json().data.status, 'canceled');
    const ended = await owner.get(`/dashboard/refunds/${to_cancel}`);
    assert.doesNotMatch(ended.body, /id="cancel-refund"|id="claim-qr"/);
    const twice = await owner.post(`/dashboard/refunds/${to_cancel}/cancel`, { confirm: 'yes' });
    assert.equal(twice.statusCode, 409);

    const only_canceled = await owner.get('/dashboard/refunds?status=canceled');
    assert.equal(only_canceled.statusCode, 200);
    assert.match(only_canceled.body, new RegExp(`data-refund="${to_cancel}"`));
    assert.doesNotMatch(only_canceled.body, new RegExp(`data-refund="${kept}"`));
    const all = await owner.get('/dashboard/refunds');
    assert.equal((all.body.match(/data-refund="/g) ?? []).length, 3);
    // Paging: 25 a page, newest first, the filter kept on the next page's link.
    const [many] = await completedPayments(t, merchant.live, [{ order_id: 'desk-many', amount: 100_000 }]);
    for (let n = 0; n < 24; n += 1) {
      const made_by_api = await t.request({
        method: 'POST',
        url: `/v1/payments/${many}/refunds`,
        headers: { 'x-api-key': merchant.live, 'idempotency-key': crypto.randomUUID() },
        payload: { amount: 100 },
      });
      assert.equal(made_by_api.statusCode, 201, made_by_api.body);
    }
    const pageOf = async (url: string) => {
      const body = (await owner.get(url)).body;
      return {
        ids: [...body.matchAll(/data-refund="([0-9a-f-]{36})"/g)].map((match) => match[1]!),
        next: /id="next-page" href="([^"]+)"/.exec(body)?.[1]?.replaceAll('&amp;', '&'),
      };
    };
    const first_page = await pageOf('/dashboard/refunds?status=requires_action,canceled');
    assert.equal(first_page.ids.length, 25);
    assert.match(first_page.next ?? '', /^\/dashboard\/refunds\?status=requires_action%2Ccanceled&cursor=/);
    const second_page = await pageOf(first_page.next!);
    assert.equal(second_page.ids.length, 2);
    assert.equal(second_page.next, undefined);
    assert.equal(new Set([...first_page.ids, ...second_page.ids]).size, 27);
    assert.ok(second_page.ids.includes(to_cancel) || first_page.ids.includes(to_cancel));
    assert.equal((await owner.get('/dashboard/refunds?cursor=not-a-cursor')).statusCode, 400);
  });

  it("a pending refund takes the merchant's slip (multipart), after which it waits for the buyer", async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'desk-slip', amount: 10_000 }]);
    const refund = (
      await t.request({
        method: 'POST',
        url: `/v1/payments/${payment_id}/refunds`,
        headers: { 'x-api-key': merchant.live, 'idempotency-key': crypto.randomUUID() },
        payload: { destination: { rail: 'promptpay', promptpay_id: '0812345678' } },
      })
    ).json().data;
    const before_slip = await owner.get(`/dashboard/refunds/${refund.id}`);
    assert.match(before_slip.body, /id="proof-form"/);
    assert.match(before_slip.body, /xxxxxx5678/);
    const { payload, headers } = multipart('proof', newSlip().bytes);
    const uploaded = await t.request({
      method: 'POST',
      url: `/dashboard/refunds/${refund.id}/proof`,
      payload,
      headers: { ...headers, cookie: owner.cookie, 'x-csrf-token': owner.csrf },
    });
    assert.equal(uploaded.statusCode, 303, uploaded.body.slice(0, 300));
    const view = (await t.call('GET', `/v1/refunds/${refund.id}`, merchant.live)).json().data;
    assert.deepEqual([view.status, view.proof.status], ['pending', 'awaiting_buyer']);
    const after_slip = await owner.get(`/dashboard/refunds/${refund.id}`);
    assert.match(after_slip.body, /data-status="awaiting_buyer"/);
    assert.doesNotMatch(after_slip.body, /id="proof-form"|id="cancel-refund"/);
  });

  it('a viewer sees refunds but no refund or cancel button, and its POSTs are refused (403)', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'desk-viewer', amount: 10_000 }]);
    const refund = (
      await t.request({
        method: 'POST',
        url: `/v1/payments/${payment_id}/refunds`,
        headers: { 'x-api-key': merchant.live, 'idempotency-key': crypto.randomUUID() },
      })
    ).json().data;
    const page = await viewer.get(`/dashboard/payments/${payment_id}`);
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /id="refund-form"/);
    assert.match(page.body, new RegExp(`href="/dashboard/refunds/${refund.id}"`));
    const detail = await viewer.get(`/dashboard/refunds/${refund.id}`);
    assert.equal(detail.statusCode, 200);
    assert.doesNotMatch(detail.body, /id="cancel-refund"|id="proof-form"/);
    const refused = await viewer.post(`/dashboard/payments/${payment_id}/refunds`, {
      _key: crypto.randomUUID(),
      funding: 'merchant_transfer',
    });
    assert.equal(refused.statusCode, 403);
    assert.equal((await viewer.post(`/dashboard/refunds/${refund.id}/cancel`, { confirm: 'yes' })).statusCode, 403);
    const listed = (await t.call('GET', `/v1/refunds?payment_id=${payment_id}`, merchant.live)).json().data;
    assert.deepEqual(
      listed.map((row: { status: string }) => row.status),
      ['requires_action'],
    );
  });

  it("another merchant's refund or payment is the 404 page; so is the other mode's", async () => {
    const [payment_id] = await completedPayments(t, other.live, [{ order_id: 'other-1', amount: 10_000 }]);
    const theirs = (
      await t.request({
        method: 'POST',
        url: `/v1/payments/${payment_id}/refunds`,
        headers: { 'x-api-key': other.live, 'idempotency-key': crypto.randomUUID() },
      })
    ).json().data;
    assert.equal((await owner.get(`/dashboard/refunds/${theirs.id}`)).statusCode, 404);
    assert.equal((await owner.post(`/dashboard/refunds/${theirs.id}/cancel`, { confirm: 'yes' })).statusCode, 404);
    const refund_theirs = await owner.post(`/dashboard/payments/${payment_id}/refunds`, {
      _key: crypto.randomUUID(),
      funding: 'merchant_transfer',
    });
    assert.equal(refund_theirs.statusCode, 404);
    assert.equal((await t.call('GET', `/v1/refunds/${theirs.id}`, other.live)).json().data.status, 'requires_action');
    assert.equal(
      (await t.call('GET', `/v1/refunds?payment_id=${payment_id}`, other.live)).json().data.length,
      1,
      'no refund was made of their payment',
    );
    assert.doesNotMatch((await owner.get('/dashboard/refunds')).body, new RegExp(theirs.id));
    // The sandbox view does not show a live refund.
    assert.equal((await owner.post('/dashboard/mode', { mode: 'sandbox' })).statusCode, 303);
    const [mine] = await t.db.selectFrom('refunds').select('id').where('merchant_id', '=', merchant.id).execute();
    assert.equal((await owner.get(`/dashboard/refunds/${mine!.id}`)).statusCode, 404);
    assert.equal((await owner.get('/dashboard/refunds/not-a-uuid')).statusCode, 404);
    assert.equal((await owner.post('/dashboard/mode', { mode: 'live' })).statusCode, 303);
  });
});
