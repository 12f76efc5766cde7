import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sweepRefunds } from '../../src/modules/refunds/sweep.ts';
import type { ReceiptValidator } from '../../src/modules/validators/port.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { multipart, uniquePng } from '../helpers/files.ts';
import { completedPayments } from '../helpers/payments.ts';
import { newSlip } from '../helpers/slips.ts';

const DAY_MS = 24 * 3600_000;

async function refundOf(t: TestApp, key: string, payment_id: string, body: object = {}) {
  const response = await t.request({
    method: 'POST',
    url: `/v1/payments/${payment_id}/refunds`,
    headers: { 'x-api-key': key, 'idempotency-key': randomUUID() },
    payload: body,
  });
  assert.equal(response.statusCode, 201, response.body);
  return response.json().data as { id: string; claim_url: string; amount: number; payment_id: string };
}

const pathOf = (claim_url: string) => new URL(claim_url).pathname;

function claimPost(t: TestApp, claim_url: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  return t.request({
    method: 'POST',
    url: pathOf(claim_url),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(form).toString(),
  });
}

function slipJson(t: TestApp, key: string, refund_id: string, bytes: Buffer = newSlip().bytes) {
  return t.call('POST', `/v1/refunds/${refund_id}/proof`, key, {
    receipt_base64: bytes.toString('base64'),
    content_type: 'image/png',
  });
}

/** The buyer's claim page, the merchant's slip and the buyer's word where nobody can check the slip (DESIGN 3c). */
describe('refunds: claim page, slips, the buyer confirms', () => {
  let t: TestApp;
  let merchant: TestMerchant;

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Siam Shop');
    await t.createSeller(thbSeller());
  });
  after(() => t.close());

  const refundRow = (id: string) =>
    t.db.selectFrom('refunds').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('shows merchant, order and amount in Thai by default for THB, English on request, a form per rail', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'shop-order-77', amount: 45_050 }]);
    const refund = await refundOf(t, merchant.live, payment_id!);
    const page = await t.request({ method: 'GET', url: pathOf(refund.claim_url) });
    assert.equal(page.statusCode, 200);
    assert.match(page.headers['content-type'] as string, /text\/html/);
    assert.match(page.body, /<html lang="th">/);
    assert.match(page.body, /Siam Shop/);
    assert.match(page.body, /shop-order-77/);
    assert.match(page.body, /฿450\.50 THB/);
    assert.match(page.body, /data-rail="promptpay"/);
    assert.match(page.body, /data-rail="thai_bank"/);
    assert.doesNotMatch(page.body, /data-rail="payid"/);
    assert.doesNotMatch(page.body, /<script/);
    const english = await t.request({ method: 'GET', url: `${pathOf(refund.claim_url)}?lang=en` });
    assert.match(english.body, /<html lang="en">/);
    assert.match(english.body, /Refund from Siam Shop/);
    const unknown = await t.request({ method: 'GET', url: '/refunds/claim/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
    assert.equal(unknown.statusCode, 404);
  });

  it("takes the buyer's destination: 303 back to the page, pending, shown masked; a bad one is 400 and changes nothing", async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'claim-1', amount: 10_000 }]);
    const refund = await refundOf(t, merchant.live, payment_id!);
    const bad = await claimPost(t, refund.claim_url, { action: 'destination', rail: 'promptpay', promptpay_id: '12' });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /role="alert"/);
    assert.equal((await refundRow(refund.id)).status, 'requires_action');
    const foreign = await claimPost(
      t,
      refund.claim_url,
      { action: 'destination', rail: 'promptpay', promptpay_id: '0899999999' },
      { origin: 'https://evil.example' },
    );
    assert.equal(foreign.statusCode, 403);
    assert.equal((await refundRow(refund.id)).status, 'requires_action');

    const good = await claimPost(
      t,
      refund.claim_url,
      {
        action: 'destination',
        rail: 'thai_bank',
        bank_code: '014',
        account_number: '123-4-56789-0',
        account_name: 'Somchai',
      },
      { origin: 'http://gateway.test' },
    );
    assert.equal(good.statusCode, 303, good.body);
    assert.equal(good.headers.location, pathOf(refund.claim_url));
    const view = (await t.call('GET', `/v1/refunds/${refund.id}`, merchant.live)).json().data;
    assert.equal(view.status, 'pending');
    assert.equal(view.next_action, null);
    assert.deepEqual([view.destination_details.rail, view.destination_details.masked], ['thai_bank', 'xxxxxx7890']);
    assert.equal((await t.event<{ data: { status: string } }>(refund.id, 'refund.updated')).data.status, 'pending');
    const again = await claimPost(t, refund.claim_url, {
      action: 'destination',
      rail: 'promptpay',
      promptpay_id: '0812345678',
    });
    assert.equal(again.statusCode, 409);
  });

  it('a slip nobody can check waits for the buyer: "no" sends it back to pending, "yes" makes it succeeded', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'confirm-1', amount: 10_000 }]);
    const refund = await refundOf(t, merchant.live, payment_id!, {
      destination: { rail: 'promptpay', promptpay_id: '0812345678' },
    });
    const first = await slipJson(t, merchant.live, refund.id);
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().data.status, 'pending');
    assert.equal(first.json().data.proof.status, 'awaiting_buyer');
    const page = await t.request({ method: 'GET', url: `${pathOf(refund.claim_url)}?lang=en` });
    assert.match(page.body, /data-stage="confirm"/);
    const no_cancel = await t.call('POST', `/v1/refunds/${refund.id}/cancel`, merchant.live);
    assert.equal(no_cancel.statusCode, 409);
    assert.equal(no_cancel.json().error.code, 'REFUND_BAD_STATE');
    const waiting_again = await slipJson(t, merchant.live, refund.id);
    assert.equal(waiting_again.statusCode, 409);

    assert.equal((await claimPost(t, refund.claim_url, { action: 'not_received' })).statusCode, 303);
    const denied = (await t.call('GET', `/v1/refunds/${refund.id}`, merchant.live)).json().data;
    assert.deepEqual([denied.status, denied.failure_reason], ['pending', 'buyer_not_received']);

    const second = await slipJson(t, merchant.live, refund.id);
    assert.equal(second.json().data.proof.status, 'awaiting_buyer');
    assert.equal(second.json().data.failure_reason, null);
    assert.equal((await claimPost(t, refund.claim_url, { action: 'received' })).statusCode, 303);
    const done = (await t.call('GET', `/v1/refunds/${refund.id}`, merchant.live)).json().data;
    assert.equal(done.status, 'succeeded');
    assert.equal(done.succeeded_at, t.clock.now().toISOString());
    await t.event(refund.id, 'refund.succeeded');
    const payment = (await t.call('GET', `/v1/payments/${payment_id}`, merchant.live)).json().data;
    assert.deepEqual([payment.amount_refunded, payment.refunded], [10_000, true]);
    const refunded = await t.event<{ data: { id: string; refunded: boolean } }>(payment_id!, 'payment.refunded');
    assert.deepEqual([refunded.data.id, refunded.data.refunded], [payment_id, true]);
    const after_page = await t.request({ method: 'GET', url: pathOf(refund.claim_url) });
    assert.match(after_page.body, /data-stage="succeeded"/);
  });
  it("a slip is known in its refund's mode: a sandbox refund's slip never makes the live one's a duplicate", async () => {
    const destination = { rail: 'promptpay', promptpay_id: '0812345678' };
    const [sandbox_payment] = await completedPayments(t, merchant.sandbox, [{ order_id: 'mode-1', amount: 10_000 }]);
    const [live_payment, other_payment] = await completedPayments(t, merchant.live, [
      { order_id: 'mode-1', amount: 10_000 },
      { order_id: 'mode-2', amount: 10_000 },
    ]);
    const slip = newSlip();
    const sandbox_refund = await refundOf(t, merchant.sandbox, sandbox_payment!, { destination });
    const in_sandbox = await slipJson(t, merchant.sandbox, sandbox_refund.id, slip.bytes);
    assert.equal(in_sandbox.statusCode, 200, in_sandbox.body);
    assert.equal(in_sandbox.json().data.failure_reason, null, in_sandbox.body);

    const live_refund = await refundOf(t, merchant.live, live_payment!, { destination });
    const live = await slipJson(t, merchant.live, live_refund.id, slip.bytes);
    assert.equal(live.statusCode, 200, live.body);
    assert.deepEqual([live.json().data.proof.status, live.json().data.failure_reason], ['awaiting_buyer', null]);

    // In its own mode the same slip is still a duplicate.
    const other_refund = await refundOf(t, merchant.live, other_payment!, { destination });
    const again = await slipJson(t, merchant.live, other_refund.id, slip.bytes);
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual([again.json().data.status, again.json().data.failure_reason], ['pending', 'duplicate_slip']);
  });
});

/** Slips that are refused or rejected, and the refunds' clock. */
describe('refunds: rejected slips and the clock', () => {
  let t: TestApp;
  let merchant: TestMerchant;

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Siam Shop');
    await t.createSeller(thbSeller());
  });
  after(() => t.close());

  const refundRow = (id: string) =>
    t.db.selectFrom('refunds').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('a rejected slip leaves the refund pending with its reason; a multipart slip is taken like a payment proof', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'reject-1', amount: 10_000 }]);
    const refund = await refundOf(t, merchant.live, payment_id!, {
      amount: 4_000,
      destination: { rail: 'promptpay', promptpay_id: '0812345678' },
    });
    const { payload, headers } = multipart('proof', uniquePng());
    const rejected = await t.request({
      method: 'POST',
      url: `/v1/refunds/${refund.id}/proof`,
      headers: { 'x-api-key': merchant.live, ...headers },
      payload,
    });
    assert.equal(rejected.statusCode, 200, rejected.body);
    assert.equal(rejected.json().data.status, 'pending');
    assert.equal(rejected.json().data.failure_reason, 'slip_qr_missing');
    assert.equal(rejected.json().data.proof.status, 'rejected');
    const slip = multipart('proof', newSlip().bytes);
    const taken = await t.request({
      method: 'POST',
      url: `/v1/refunds/${refund.id}/proof`,
      headers: { 'x-api-key': merchant.live, ...slip.headers },
      payload: slip.payload,
    });
    assert.equal(taken.json().data.proof.status, 'awaiting_buyer');
    const not_image = multipart('proof', Buffer.from('plain text'));
    const refused = await t.request({
      method: 'POST',
      url: `/v1/refunds/${refund.id}/proof`,
      headers: { 'x-api-key': merchant.live, ...not_image.headers },
      payload: not_image.payload,
    });
    assert.equal(refused.statusCode, 400);
  });

  it('refuses a slip before the destination is known, a malformed one, and another merchant’s refund', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'slip-state', amount: 10_000 }]);
    const refund = await refundOf(t, merchant.live, payment_id!);
    const early = await slipJson(t, merchant.live, refund.id);
    assert.equal(early.statusCode, 409);
    assert.equal(early.json().error.code, 'REFUND_BAD_STATE');
    const malformed = await t.call('POST', `/v1/refunds/${refund.id}/proof`, merchant.live, {
      receipt_base64: '***',
      content_type: 'image/png',
    });
    assert.equal(malformed.statusCode, 400);
    const other = await t.createMerchant('Stranger');
    assert.equal((await slipJson(t, other.live, refund.id)).statusCode, 404);
    assert.equal((await slipJson(t, undefined as unknown as string, refund.id)).statusCode, 401);
  });

  it('a slip the buyer does not dispute for REFUND_CONFIRM_DAYS stands; an unclaimed link expires after REFUND_CLAIM_DAYS', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'clock-1', amount: 10_000 }]);
    const silent = await refundOf(t, merchant.live, payment_id!, {
      amount: 5_000,
      destination: { rail: 'promptpay', promptpay_id: '0812345678' },
    });
    const unclaimed = await refundOf(t, merchant.live, payment_id!, { amount: 5_000 });
    await slipJson(t, merchant.live, silent.id);
    t.clock.advance(7 * DAY_MS - 1000);
    await sweepRefunds(t.application.refunds);
    assert.equal((await refundRow(silent.id)).status, 'pending');
    t.clock.advance(2000);
    await sweepRefunds(t.application.refunds);
    assert.equal((await refundRow(silent.id)).status, 'succeeded');
    const payment = (await t.call('GET', `/v1/payments/${payment_id}`, merchant.live)).json().data;
    assert.deepEqual([payment.amount_refunded, payment.refunded], [5_000, false]);

    assert.equal((await refundRow(unclaimed.id)).status, 'requires_action');
    t.clock.advance(23 * DAY_MS);
    await sweepRefunds(t.application.refunds);
    const ended = (await t.call('GET', `/v1/refunds/${unclaimed.id}`, merchant.live)).json().data;
    assert.deepEqual([ended.status, ended.failure_reason], ['canceled', 'claim_expired']);
    await t.event(unclaimed.id, 'refund.canceled');
    const page = await t.request({ method: 'GET', url: pathOf(unclaimed.claim_url) });
    assert.match(page.body, /data-stage="ended"/);
  });
});

/** With a provider that checks amount and payee, the merchant's slip alone makes the refund succeed. */
describe('refunds: a provider-checked slip', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  const checks: { expected_amount_minor?: number; receiver?: object }[] = [];
  const provider: ReceiptValidator = {
    kind: 'easyslip',
    validate: async (check) => {
      checks.push({ expected_amount_minor: check.expected_amount_minor, receiver: check.receiver });
      return {
        outcome: 'verified',
        validator_kind: 'easyslip',
        reference: `REF${checks.length}${Date.now()}`,
        response: {},
      };
    },
  };

  before(async () => {
    t = await startTestApp({ overrides: { validator: provider } });
    merchant = await t.createMerchant();
    await t.createSeller(thbSeller());
  });
  after(() => t.close());

  it('succeeds at once, checked against the refund amount and the buyer as payee', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'provider-1', amount: 10_000 }]);
    const refund = await refundOf(t, merchant.live, payment_id!, {
      amount: 3_000,
      destination: { rail: 'promptpay', promptpay_id: '0898765432' },
    });
    const response = await slipJson(t, merchant.live, refund.id);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().data.status, 'succeeded');
    assert.equal(response.json().data.proof.status, 'verified');
    assert.deepEqual(checks.at(-1), { expected_amount_minor: 3_000, receiver: { promptpay_id: '0898765432' } });
    const payment = (await t.call('GET', `/v1/payments/${payment_id}`, merchant.live)).json().data;
    assert.deepEqual([payment.amount_refunded, payment.refunded], [3_000, false]);
  });
});
