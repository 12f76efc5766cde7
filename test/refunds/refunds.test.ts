import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { completedPayments } from '../helpers/payments.ts';
import { newSlip } from '../helpers/slips.ts';

/** The refunds API (DESIGN 3c): create on a payment that received money, never more than it received; list, read, cancel. */
describe('refunds: create, list, read, cancel', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let other: TestMerchant;

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Refunding shop');
    other = await t.createMerchant('Other shop');
    await t.createSeller(thbSeller());
  });
  after(() => t.close());

  const refund = (
    payment_id: string,
    body?: unknown,
    key = merchant.live,
    idempotency_key: string | null = randomUUID(),
  ) =>
    t.request({
      method: 'POST',
      url: `/v1/payments/${payment_id}/refunds`,
      headers: { 'x-api-key': key, ...(idempotency_key ? { 'idempotency-key': idempotency_key } : {}) },
      ...(body === undefined ? {} : { payload: body as object }),
    });

  it('refunds the whole payment by default and waits for the buyer behind a claim link', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'full-1', amount: 12_345 }]);
    const response = await refund(payment_id!);
    assert.equal(response.statusCode, 201, response.body);
    const data = response.json().data;
    assert.equal(data.payment_id, payment_id);
    assert.equal(data.amount, 12_345);
    assert.equal(data.amount_decimal, '123.45');
    assert.equal(data.currency, 'THB');
    assert.equal(data.status, 'requires_action');
    assert.equal(data.funding, 'merchant_transfer');
    assert.equal(data.destination_details, null);
    assert.equal(data.next_action.type, 'claim');
    assert.match(data.next_action.claim_url, /^http:\/\/gateway\.test\/refunds\/claim\/[A-Za-z0-9]{32}$/);
    assert.equal(data.next_action.expires_at, new Date(t.clock.now().getTime() + 30 * 24 * 3600_000).toISOString());
    assert.equal(data.receipt_url, null);
    const event = await t.event<{ data: { id: string; status: string } }>(data.id, 'refund.created');
    assert.equal(event.data.status, 'requires_action');
    const payment = (await t.call('GET', `/v1/payments/${payment_id}`, merchant.live)).json().data;
    assert.equal(payment.amount_refunded, 0);
    assert.equal(payment.refunded, false);
  });

  it('takes partial amounts in minor units or as a decimal string, and never more than was received', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'partial-1', amount: 10_000 }]);
    const first = await refund(payment_id!, { amount: 2_500, reason: 'partial_delivery', metadata: { ticket: 'T-1' } });
    assert.equal(first.statusCode, 201, first.body);
    assert.deepEqual(
      [first.json().data.amount, first.json().data.reason, first.json().data.metadata],
      [2_500, 'partial_delivery', { ticket: 'T-1' }],
    );
    const second = await refund(payment_id!, { amount: '50.00' });
    assert.equal(second.json().data.amount, 5_000);
    const over = await refund(payment_id!, { amount: 2_501 });
    assert.equal(over.statusCode, 409);
    assert.equal(over.json().error.code, 'REFUND_EXCEEDS_PAYMENT');
    assert.equal(over.json().error.details[0].remaining, 2_500);
    const rest = await refund(payment_id!);
    assert.equal(rest.json().data.amount, 2_500);
    const nothing_left = await refund(payment_id!);
    assert.equal(nothing_left.statusCode, 409);
    assert.equal(nothing_left.json().error.code, 'REFUND_EXCEEDS_PAYMENT');

    // A canceled refund no longer counts.
    const canceled = await t.call('POST', `/v1/refunds/${rest.json().data.id}/cancel`, merchant.live);
    assert.equal(canceled.statusCode, 200, canceled.body);
    assert.equal(canceled.json().data.status, 'canceled');
    const again = await refund(payment_id!, { amount: '25' });
    assert.equal(again.statusCode, 201, again.body);
    assert.equal(again.json().data.amount, 2_500);
  });

  it('answers 400 for a bad body and leaves nothing behind', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'bad-body', amount: 10_000 }]);
    for (const body of [
      { amount: '1.005' },
      { amount: 0 },
      { amount: -5 },
      { reason: 'changed_mind' },
      { funding: 'card' },
      { unknown: true },
      { destination: { rail: 'payid', payid: 'buyer@example.com' } },
      { destination: { rail: 'promptpay', promptpay_id: '12' } },
    ]) {
      const response = await refund(payment_id!, body);
      assert.equal(response.statusCode, 400, `${JSON.stringify(body)}: ${response.body}`);
      assert.equal(response.json().error.code, 'VALIDATION_ERROR');
    }
    const none = await t.call('GET', `/v1/refunds?payment_id=${payment_id}`, merchant.live);
    assert.deepEqual(none.json().data, []);
  });

  it('requires a UUID Idempotency-Key and replays a repeated request', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'idem-1', amount: 10_000 }]);
    const missing = await refund(payment_id!, { amount: 100 }, merchant.live, null);
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().error.code, 'VALIDATION_ERROR');
    const key = randomUUID();
    const first = await refund(payment_id!, { amount: 100 }, merchant.live, key);
    const replay = await refund(payment_id!, { amount: 100 }, merchant.live, key);
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.json().data.id, first.json().data.id);
    const conflict = await refund(payment_id!, { amount: 200 }, merchant.live, key);
    assert.equal(conflict.statusCode, 409);
    assert.equal(conflict.json().error.code, 'IDEMPOTENCY_KEY_CONFLICT');
    const listed = await t.call('GET', `/v1/refunds?payment_id=${payment_id}`, merchant.live);
    assert.equal(listed.json().data.length, 1);
  });

  it('refuses a payment that received nothing with 409 PAYMENT_BAD_STATE', async () => {
    const created = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: 'unpaid-1',
      amount: 10_000,
      currency: 'THB',
      return_url: 'https://shop.example/return',
    });
    const response = await refund(created.json().data.id);
    assert.equal(response.statusCode, 409);
    assert.equal(response.json().error.code, 'PAYMENT_BAD_STATE');
  });

  it("answers 404 for another merchant's or another mode's payment and refund, 401 without a key", async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'owner-1', amount: 10_000 }]);
    for (const key of [other.live, merchant.test, merchant.sandbox]) {
      const response = await refund(payment_id!, undefined, key);
      assert.equal(response.statusCode, 404, response.body);
      assert.equal(response.json().error.code, 'NOT_FOUND');
    }
    const mine = (await refund(payment_id!, { amount: 100 })).json().data;
    for (const key of [other.live, merchant.test]) {
      assert.equal((await t.call('GET', `/v1/refunds/${mine.id}`, key)).statusCode, 404);
      assert.equal((await t.call('POST', `/v1/refunds/${mine.id}/cancel`, key)).statusCode, 404);
      assert.deepEqual((await t.call('GET', `/v1/refunds?payment_id=${payment_id}`, key)).json().data, []);
    }
    for (const [method, url] of [
      ['POST', `/v1/payments/${payment_id}/refunds`],
      ['GET', '/v1/refunds'],
      ['GET', `/v1/refunds/${mine.id}`],
      ['POST', `/v1/refunds/${mine.id}/cancel`],
    ] as const) {
      const response = await t.call(method, url, undefined, method === 'POST' ? {} : undefined);
      assert.equal(response.statusCode, 401, url);
      assert.equal(response.json().error.code, 'UNAUTHORIZED');
      assert.equal(
        (await t.call(method, url, 'svc_live_not-a-real-key-000000000000000000', method === 'POST' ? {} : undefined))
          .statusCode,
        401,
      );
    }
  });

  it("takes the merchant's destination for the buyer: pending, shown masked", async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'dest-1', amount: 10_000 }]);
    const promptpay = await refund(payment_id!, {
      amount: 1_000,
      destination: { rail: 'promptpay', promptpay_id: '081-234-5678' },
    });
    assert.equal(promptpay.statusCode, 201, promptpay.body);
    assert.equal(promptpay.json().data.status, 'pending');
    assert.equal(promptpay.json().data.next_action, null);
    assert.deepEqual(promptpay.json().data.destination_details, { rail: 'promptpay', masked: 'xxxxxx5678' });
    const bank = await refund(payment_id!, {
      amount: 1_000,
      destination: { rail: 'thai_bank', bank_code: 'KBANK', account_number: '123-4-56789-0', account_name: 'Buyer' },
    });
    assert.equal(bank.statusCode, 201, bank.body);
    assert.equal(bank.json().data.destination_details.masked, 'xxxxxx7890');
    assert.equal(bank.json().data.destination_details.bank_code, '004');
    assert.doesNotMatch(bank.body, /1234567890/);
  });

  it('lists newest first with payment_id and a comma-separated status filter, and reads one', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'list-1', amount: 10_000 }]);
    const a = (await refund(payment_id!, { amount: 100 })).json().data;
    t.clock.advance(1000);
    const b = (
      await refund(payment_id!, { amount: 100, destination: { rail: 'promptpay', promptpay_id: '0812345678' } })
    ).json().data;
    t.clock.advance(1000);
    const c = (await refund(payment_id!, { amount: 100 })).json().data;
    await t.call('POST', `/v1/refunds/${c.id}/cancel`, merchant.live);
    const all = await t.call('GET', `/v1/refunds?payment_id=${payment_id}`, merchant.live);
    assert.deepEqual(
      all.json().data.map((row: { id: string }) => row.id),
      [c.id, b.id, a.id],
    );
    const some = await t.call('GET', `/v1/refunds?payment_id=${payment_id}&status=pending,canceled`, merchant.live);
    assert.deepEqual(
      some.json().data.map((row: { id: string }) => row.id),
      [c.id, b.id],
    );
    const page = await t.call('GET', `/v1/refunds?payment_id=${payment_id}&limit=2`, merchant.live);
    assert.equal(page.json().has_more, true);
    const next = await t.call(
      'GET',
      `/v1/refunds?payment_id=${payment_id}&limit=2&cursor=${page.json().next_cursor}`,
      merchant.live,
    );
    assert.deepEqual(
      next.json().data.map((row: { id: string }) => row.id),
      [a.id],
    );
    const bad = await t.call('GET', '/v1/refunds?status=done', merchant.live);
    assert.equal(bad.statusCode, 400);
    const one = await t.call('GET', `/v1/refunds/${b.id}`, merchant.live);
    assert.equal(one.json().data.status, 'pending');
  });

  it('cancels only before the money moved, with refund.updated and refund.canceled', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'cancel-1', amount: 10_000 }]);
    const created = (await refund(payment_id!, { amount: 100 })).json().data;
    const canceled = await t.call('POST', `/v1/refunds/${created.id}/cancel`, merchant.live);
    assert.equal(canceled.json().data.status, 'canceled');
    assert.equal(canceled.json().data.canceled_at, t.clock.now().toISOString());
    assert.equal((await t.event<{ data: { status: string } }>(created.id, 'refund.updated')).data.status, 'canceled');
    await t.event(created.id, 'refund.canceled');
    const again = await t.call('POST', `/v1/refunds/${created.id}/cancel`, merchant.live);
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().error.code, 'REFUND_BAD_STATE');
  });

  it('never lets concurrent refunds add up to more than the payment received', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'race-1', amount: 10_000 }]);
    const responses = await Promise.all(Array.from({ length: 12 }, () => refund(payment_id!, { amount: 3_000 })));
    const statuses = responses.map((response) => response.statusCode).sort();
    assert.deepEqual(statuses, [201, 201, 201, ...Array(9).fill(409)]);
    for (const response of responses.filter((r) => r.statusCode === 409))
      assert.equal(response.json().error.code, 'REFUND_EXCEEDS_PAYMENT');
    const rows = await t.db
      .selectFrom('refunds')
      .select('amount_minor')
      .where('payment_id', '=', payment_id!)
      .execute();
    assert.equal(
      rows.reduce((sum, row) => sum + Number(row.amount_minor), 0),
      9_000,
    );
  });

  it("shows a settled payment's refunds in its settlement statement and CSV line", async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'settled-1', amount: 10_000 }]);
    const run = await t.admin('POST', '/admin/settlements/run');
    const batch = run
      .json()
      .data.batches.find((b: { payment_count: number; id: string }) => b.payment_count > 0 && b.id);
    const detail = async () => {
      const mine = (await t.call('GET', '/v1/settlements?limit=100', merchant.live)).json().data as { id: string }[];
      for (const row of mine) {
        const items = (await t.call('GET', `/v1/settlements/${row.id}/payments`, merchant.live)).json().data;
        if (items.some((item: { payment_id: string }) => item.payment_id === payment_id)) return row.id;
      }
      throw new Error('no batch holds the payment');
    };
    assert.ok(batch);
    const batch_id = await detail();
    const created = (
      await refund(payment_id!, { amount: '12.34', destination: { rail: 'promptpay', promptpay_id: '0812345678' } })
    ).json().data;
    const slip = await t.call('POST', `/v1/refunds/${created.id}/proof`, merchant.live, {
      receipt_base64: newSlip().bytes.toString('base64'),
      content_type: 'image/png',
    });
    assert.equal(slip.statusCode, 200, slip.body);
    const confirm = await t.request({
      method: 'POST',
      url: new URL(created.claim_url).pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'action=received',
    });
    assert.equal(confirm.statusCode, 303);
    const statement = (await t.call('GET', `/v1/settlements/${batch_id}`, merchant.live)).json().data;
    assert.ok(statement.refunded_minor >= 1_234);
    const items = (await t.call('GET', `/v1/settlements/${batch_id}/payments`, merchant.live)).json().data;
    const item = items.find((row: { payment_id: string }) => row.payment_id === payment_id);
    assert.deepEqual([item.refunded_minor, item.refunded_decimal], [1_234, '12.34']);
    const csv = (await t.call('GET', `/v1/settlements/${batch_id}/export.csv`, merchant.live)).body.split('\r\n');
    assert.match(csv[0]!, /,refunded_minor,refunded$/);
    const line = csv.find((row) => row.startsWith(payment_id!));
    assert.ok(line?.endsWith(',1234,12.34'), line);
  });
});
