import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { processProofVerdicts } from '../../src/modules/payments/verdicts.ts';
import { scriptedValidator } from '../helpers/validator.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { multipart } from '../helpers/files.ts';
import { drainVerdicts } from '../helpers/payments.ts';
import { newSlip } from '../helpers/slips.ts';

describe('receipts: numbers without gaps per merchant and mode, and the printable page', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let order = 0;

  before(async () => {
    // A verification provider's verdicts (the double checks like easyslip): completion is what this file counts.
    t = await startTestApp({ overrides: { validator: scriptedValidator() } });
    merchant = await t.createMerchant('Baan Silk');
    await t.createSeller(thbSeller(1_000_000_000));
  });
  after(() => t.close());

  async function trade(key: string, amount = 10_000): Promise<string> {
    const response = await t.call('POST', '/v1/trades', key, {
      order_id: `r-${++order}`,
      amount,
      currency: 'THB',
      return_url: 'https://shop.example/return',
    });
    assert.equal(response.statusCode, 201, response.body);
    return response.json().data.id;
  }
  async function pay(key: string, id: string): Promise<string> {
    const slip = newSlip();
    const { payload, headers } = multipart('proof', slip.bytes);
    const response = await t.request({
      method: 'POST',
      url: `/v1/payments/${id}/proof`,
      payload,
      headers: { ...headers, 'x-api-key': key },
    });
    assert.equal(response.statusCode, 200, response.body);
    return slip.reference;
  }
  const read = async (id: string, key = merchant.live) =>
    (await t.call('GET', `/v1/payments/${id}`, key)).json().data as Record<string, any>;
  const numbersOf = async (merchant_id: string, is_sandbox: boolean) =>
    (
      await t.db
        .selectFrom('payments')
        .select('receipt_number')
        .where('merchant_id', '=', merchant_id)
        .where('is_sandbox', '=', is_sandbox)
        .where('receipt_number', 'is not', null)
        .orderBy('receipt_number')
        .execute()
    ).map((row) => row.receipt_number);

  it('a completed payment gets the next receipt number and an unguessable receipt_url; an open one has none', async () => {
    const first = await trade(merchant.live);
    const open = await read(first);
    assert.equal(open.receipt_number, null);
    assert.equal(open.receipt_url, null);
    await pay(merchant.live, first);
    await drainVerdicts(t);
    const done = await read(first);
    assert.equal(done.status, 'completed');
    assert.equal(done.receipt_number, 1);
    assert.match(done.receipt_url, /^http:\/\/gateway\.test\/receipts\/[0-9a-f]{64}$/);
    const event = await t.event<{ data: { receipt_number: number; receipt_url: string } }>(first, 'payment.completed');
    assert.equal(event.data.receipt_number, 1);
    assert.equal(event.data.receipt_url, done.receipt_url);
    const second = await trade(merchant.live);
    await pay(merchant.live, second);
    await drainVerdicts(t);
    const next = await read(second);
    assert.equal(next.receipt_number, 2);
    assert.notEqual(next.receipt_url, done.receipt_url);
    // Another merchant, and the other mode, count on their own.
    const other = await t.createMerchant('Other');
    const theirs = await trade(other.live);
    await pay(other.live, theirs);
    const sandbox = await trade(merchant.sandbox);
    await pay(merchant.sandbox, sandbox);
    await drainVerdicts(t);
    assert.equal((await read(theirs, other.live)).receipt_number, 1);
    assert.equal((await read(sandbox, merchant.sandbox)).receipt_number, 1);
    const listed = await t.call('GET', '/v1/payments?status=completed', merchant.live);
    assert.deepEqual(
      listed
        .json()
        .data.map((payment: { receipt_number: number }) => payment.receipt_number)
        .sort(),
      [1, 2],
    );
  });

  it('concurrent completions take consecutive numbers: no gap, no duplicate', async () => {
    const shop = await t.createMerchant('Busy shop');
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await trade(shop.live, 1_000 + i));
    for (const id of ids) await pay(shop.live, id);
    const deps = { ...t.application.payments, validator: t.application.validator };
    await Promise.all([1, 2, 3, 4].map(() => processProofVerdicts(deps, 3)));
    await drainVerdicts(t);
    for (const id of ids) assert.equal((await read(id, shop.live)).status, 'completed');
    assert.deepEqual(
      await numbersOf(shop.id, false),
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
  });

  it('a completion that rolls back gives its number back', async () => {
    const shop = await t.createMerchant('Rollback shop');
    const [a, b] = [await trade(shop.live), await trade(shop.live)];
    await pay(shop.live, a);
    await pay(shop.live, b);
    await assert.rejects(
      t.db.transaction().execute(async (trx) => {
        await sql`update payments set status = 'completed' where id = ${a}`.execute(trx);
        const taken = await trx
          .selectFrom('payments')
          .select('receipt_number')
          .where('id', '=', a)
          .executeTakeFirstOrThrow();
        assert.equal(taken.receipt_number, 1);
        throw new Error('the completion fails after taking its number');
      }),
      /the completion fails/,
    );
    await drainVerdicts(t);
    assert.deepEqual(await numbersOf(shop.id, false), [1, 2]);
  });

  it('the receipt page: Thai by default for THB, English on request, the merchant, amount, rail and bank reference', async () => {
    const id = await trade(merchant.live, 45_050);
    const reference = await pay(merchant.live, id);
    await drainVerdicts(t);
    const payment = await read(id);
    const path = new URL(payment.receipt_url).pathname;
    const thai = await t.request({ method: 'GET', url: path });
    assert.equal(thai.statusCode, 200);
    assert.match(String(thai.headers['content-type']), /text\/html/);
    assert.equal(thai.headers['cache-control'], 'no-store');
    assert.match(thai.body, /<html lang="th">/);
    assert.match(thai.body, /ใบเสร็จรับเงิน/);
    assert.match(thai.body, /Baan Silk/);
    assert.match(thai.body, new RegExp(`id="receipt-number">${String(payment.receipt_number).padStart(6, '0')}<`));
    assert.match(thai.body, /฿450\.50 THB/);
    assert.match(thai.body, /พร้อมเพย์/);
    assert.match(thai.body, /ชำระแล้ว/);
    assert.match(thai.body, new RegExp(reference));
    assert.match(thai.body, new RegExp(payment.order_id));
    const english = await t.request({ method: 'GET', url: `${path}?lang=en` });
    assert.match(english.body, /<html lang="en">/);
    assert.match(english.body, /Receipt no\./);
    assert.match(english.body, /PromptPay/);
    assert.match(english.body, /Asia\/Bangkok/);
    const sandbox_id = await trade(merchant.sandbox);
    await pay(merchant.sandbox, sandbox_id);
    await drainVerdicts(t);
    const sandbox_path = new URL((await read(sandbox_id, merchant.sandbox)).receipt_url).pathname;
    const sandbox_page = await t.request({ method: 'GET', url: `${sandbox_path}?lang=en` });
    assert.match(sandbox_page.body, /Sandbox: a test receipt/);
    assert.match(sandbox_page.body, /TEST-0000\d\d/);
    for (const url of [`/receipts/${'0'.repeat(64)}`, '/receipts/nope', `${path.slice(0, -1)}x`]) {
      const missing = await t.request({ method: 'GET', url });
      assert.equal(missing.statusCode, 404, url);
      assert.match(missing.body, /ไม่พบใบเสร็จ|Receipt not found/);
    }
  });

  it('a partial refund shows on the receipt (partly refunded, what was kept), and the succeeded refund has its own receipt', async () => {
    const id = await trade(merchant.sandbox, 100_000);
    await pay(merchant.sandbox, id);
    await drainVerdicts(t);
    const refund = await t.call(
      'POST',
      `/v1/payments/${id}/refunds`,
      merchant.sandbox,
      { amount: '300.00', reason: 'partial_delivery' },
      { 'idempotency-key': crypto.randomUUID() },
    );
    assert.equal(refund.statusCode, 201, refund.body);
    assert.equal(refund.json().data.receipt_url, null);
    const receipt_path = new URL((await read(id, merchant.sandbox)).receipt_url).pathname;
    const waiting = await t.request({ method: 'GET', url: `${receipt_path}?lang=en` });
    assert.match(waiting.body, /waiting for the buyer/);
    assert.match(waiting.body, /id="refunded">฿0\.00 THB/);
    const simulated = await t.call('POST', `/v1/sandbox/refunds/${refund.json().data.id}/simulate`, merchant.sandbox, {
      outcome: 'succeeded',
    });
    assert.equal(simulated.statusCode, 200, simulated.body);
    const refund_receipt = simulated.json().data.receipt_url;
    assert.match(refund_receipt, /^http:\/\/gateway\.test\/receipts\/[0-9a-f]{64}$/);
    assert.equal(
      (await t.call('GET', `/v1/refunds/${refund.json().data.id}`, merchant.sandbox)).json().data.receipt_url,
      refund_receipt,
    );
    const page = await t.request({ method: 'GET', url: `${receipt_path}?lang=en` });
    assert.match(page.body, /Partly refunded/);
    assert.match(page.body, /id="refunded">฿300\.00 THB/);
    assert.match(page.body, /id="net" class="total">฿700\.00 THB/);
    assert.match(page.body, new RegExp(`href="${refund_receipt}\\?lang=en"`));
    const own = await t.request({ method: 'GET', url: `${new URL(refund_receipt).pathname}?lang=en` });
    assert.equal(own.statusCode, 200);
    assert.match(own.body, /Refund receipt/);
    assert.match(own.body, /id="refunded" class="total">฿300\.00 THB/);
    assert.match(own.body, /Refund of receipt no\. TEST-/);
    // the rest refunded: the receipt says refunded
    const rest = await t.call(
      'POST',
      `/v1/payments/${id}/refunds`,
      merchant.sandbox,
      {},
      { 'idempotency-key': crypto.randomUUID() },
    );
    assert.equal(rest.statusCode, 201, rest.body);
    await t.call('POST', `/v1/sandbox/refunds/${rest.json().data.id}/simulate`, merchant.sandbox, {
      outcome: 'succeeded',
    });
    const whole = await t.request({ method: 'GET', url: `${receipt_path}?lang=en` });
    assert.match(whole.body, /id="receipt-status">Refunded</);
    assert.match(whole.body, /id="net" class="total">฿0\.00 THB/);
  });
});
