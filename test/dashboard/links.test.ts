import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { scriptedValidator } from '../helpers/validator.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { drainVerdicts, uploadProof } from '../helpers/payments.ts';
import { addUser, signIn, type Browser } from './helpers.ts';

describe('dashboard: payment links (create, list, copy, QR, deactivate) and the receipt link on a payment', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let owner: Browser;
  let viewer: Browser;

  before(async () => {
    // A verification provider's verdicts (the double checks like easyslip), so live payments complete.
    t = await startTestApp({ overrides: { validator: scriptedValidator() } });
    merchant = await t.createMerchant('Links Shop');
    await t.createSeller(thbSeller(10_000_000));
    await addUser(t, merchant.id, 'owner@links.example', 'owner');
    await addUser(t, merchant.id, 'viewer@links.example', 'viewer');
    owner = await signIn(t, 'owner@links.example');
    viewer = await signIn(t, 'viewer@links.example');
  });
  after(() => t.close());

  it('an owner creates a fixed and a range link; the list shows each with its link to copy; a bad form keeps what was typed', async () => {
    const fixed = await owner.post('/dashboard/links', {
      _key: crypto.randomUUID(),
      title: 'Silk scarf',
      currency: 'THB',
      amount: '1,450.00',
    });
    assert.equal(fixed.statusCode, 303, fixed.body.slice(0, 300));
    const path = String(fixed.headers.location).split('?')[0]!;
    assert.match(path, /^\/dashboard\/links\/plink_[0-9a-f]{32}$/);
    const id = path.split('/').pop()!;
    const api = (await t.call('GET', `/v1/payment-links/${id}`, merchant.live)).json().data;
    assert.equal(api.amount, 145_000);
    assert.equal(api.reusable, false);

    const range = await owner.post('/dashboard/links', {
      _key: crypto.randomUUID(),
      title: 'Tip jar',
      currency: 'THB',
      min: '20',
      max: '2000',
      reusable: 'yes',
      max_payments: '50',
      expires_on: '2099-12-31',
    });
    assert.equal(range.statusCode, 303, range.body.slice(0, 300));
    const range_id = String(range.headers.location).split('?')[0]!.split('/').pop()!;
    const range_api = (await t.call('GET', `/v1/payment-links/${range_id}`, merchant.live)).json().data;
    assert.deepEqual([range_api.amount_range.min, range_api.amount_range.max], [2_000, 200_000]);
    assert.equal(range_api.max_payments, 50);
    assert.equal(range_api.expires_at, '2100-01-01T00:00:00.000Z');

    const list = await owner.get('/dashboard/links');
    assert.equal(list.statusCode, 200);
    assert.match(list.body, new RegExp(`data-link="${id}"`));
    assert.match(list.body, new RegExp(`value="${api.url}"`));
    assert.match(list.body, /data-copy="url-/);
    assert.match(list.body, /Tip jar/);

    const both = await owner.post('/dashboard/links', {
      _key: crypto.randomUUID(),
      title: 'Confused',
      currency: 'THB',
      amount: '10',
      min: '1',
      max: '5',
    });
    assert.equal(both.statusCode, 400);
    assert.match(both.body, /id="error-message"/);
    assert.match(both.body, /value="Confused"/);
  });

  it('a viewer sees the links but cannot create or deactivate one (403)', async () => {
    const link = (
      await t.call('POST', '/v1/payment-links', merchant.live, { title: 'V', currency: 'THB', amount: 100 })
    ).json().data;
    const page = await viewer.get('/dashboard/links');
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /id="new-link"/);
    assert.equal(
      (await viewer.post('/dashboard/links', { title: 'No', currency: 'THB', amount: '1' })).statusCode,
      403,
    );
    assert.equal((await viewer.post(`/dashboard/links/${link.id}/deactivate`, { confirm: 'yes' })).statusCode, 403);
    assert.equal((await t.call('GET', `/v1/payment-links/${link.id}`, merchant.live)).json().data.active, true);
  });

  it("a link's page shows its QR and its payments; deactivation needs the confirmation box; the payment shows its receipt link", async () => {
    const link = (
      await t.call('POST', '/v1/payment-links', merchant.live, { title: 'Vase', currency: 'THB', amount: 900 })
    ).json().data;
    const use = await t.request({ method: 'POST', url: `/pay/${link.id}` });
    assert.equal(use.statusCode, 303);
    const payment_id = String(use.headers.location).split('/').pop()!;
    await uploadProof(t, merchant.live, payment_id);
    await drainVerdicts(t);
    const page = await owner.get(`/dashboard/links/${link.id}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<img class="qr" id="link-qr" src="data:image\/png;base64,/);
    assert.match(page.body, new RegExp(`href="/dashboard/payments/${payment_id}"`));
    assert.match(page.body, /data-status="used_up"/);
    const payment = (await t.call('GET', `/v1/payments/${payment_id}`, merchant.live)).json().data;
    const detail = await owner.get(`/dashboard/payments/${payment_id}`);
    assert.match(detail.body, new RegExp(`id="receipt-link" href="${payment.receipt_url}"`));
    assert.match(detail.body, new RegExp(`id="payment-link" href="/dashboard/links/${link.id}"`));

    const other = (
      await t.call('POST', '/v1/payment-links', merchant.live, { title: 'Bowl', currency: 'THB', amount: 500 })
    ).json().data;
    const unconfirmed = await owner.post(`/dashboard/links/${other.id}/deactivate`, {});
    assert.equal(unconfirmed.statusCode, 400);
    assert.equal((await t.call('GET', `/v1/payment-links/${other.id}`, merchant.live)).json().data.active, true);
    const done = await owner.post(`/dashboard/links/${other.id}/deactivate`, { confirm: 'yes' });
    assert.equal(done.statusCode, 303);
    assert.equal((await t.call('GET', `/v1/payment-links/${other.id}`, merchant.live)).json().data.state, 'inactive');
    assert.match((await owner.get(`/dashboard/links/${other.id}`)).body, /data-status="inactive"/);
    // Another mode's or an unknown link is the 404 page.
    assert.equal((await owner.get('/dashboard/links/plink_0123456789abcdef0123456789abcdef')).statusCode, 404);
    assert.equal((await owner.get('/dashboard/links/nope')).statusCode, 404);
  });
});
