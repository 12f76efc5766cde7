import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { expireDuePayments } from '../../src/modules/payments/service.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { multipartParts } from '../helpers/files.ts';
import { confirmAwaitingLegs, drainVerdicts } from '../helpers/payments.ts';
import { newSlip } from '../helpers/slips.ts';

/**
 * DESIGN 3a "Multi-leg proofs", with the default validator (slip_qr on THB): one `proof` part per leg, or one part
 * plus `leg`; each leg judged on its own; the payment completes only when every leg is verified. The local slip check
 * is no evidence for live money (DESIGN 3b): a slip that passes it waits for its seller, whose confirmation (here an
 * operator's for it) verifies the leg.
 */
describe('multi-leg proofs', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let order = 0;
  const sellers: string[] = [];

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Multi-leg');
  });
  after(() => t.close());

  /** Two new sellers at one rate with 1,000 and 500 THB: a 1,500 THB payment always takes two legs (oldest offers first). */
  async function twoLegPayment(extra: Record<string, unknown> = {}) {
    // Earlier tests' sellers may keep liquidity a partly paid or open payment gave back: only this test's two offer.
    await t.db.updateTable('sellers').set({ active: false }).where('synthetic', '=', false).execute();
    sellers.push((await t.createSeller(thbSeller(100_000, '35.00', '0811111111'))).id);
    sellers.push((await t.createSeller(thbSeller(50_000, '35.00', '0822222222'))).id);
    const created = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: `ml-${++order}`,
      amount: 150_000,
      currency: 'THB',
      return_url: 'https://shop.example/r',
      ...extra,
    });
    assert.equal(created.statusCode, 201, created.body);
    const payment = created.json().data;
    assert.equal(payment.match_details.length, 2, created.body);
    return payment as {
      id: string;
      match_details: { match_order: number; seller_id: string; allocated_fiat_amount: number; proof: unknown }[];
    };
  }
  const upload = (id: string, parts: { name: string; value: Buffer | string }[]) => {
    const { payload, headers } = multipartParts(parts);
    return t.request({
      method: 'POST',
      url: `/v1/payments/${id}/proof`,
      payload,
      headers: { ...headers, 'x-api-key': merchant.live },
    });
  };
  /** The legs of a payment that hold a stored slip. */
  const legsWithSlips = async (payment_id: string) =>
    (
      await t.db
        .selectFrom('payment_proofs')
        .select('match_order')
        .where('payment_id', '=', payment_id)
        .orderBy('match_order')
        .execute()
    ).map((row) => row.match_order);
  const read = async (id: string) => (await t.call('GET', `/v1/payments/${id}`, merchant.live)).json().data;
  const reserved = async () =>
    (await t.db.selectFrom('sellers').select(['id', 'reserved_minor']).where('id', 'in', sellers).execute()).reduce(
      (sum, row) => sum + Number(row.reserved_minor),
      0,
    );

  it('one part per leg in one request: both legs checking, then verified, and the payment completes', async () => {
    const payment = await twoLegPayment();
    const response = await upload(payment.id, [
      { name: 'proof', value: newSlip().bytes },
      { name: 'proof', value: newSlip({ format: 'jpeg' }).bytes },
    ]);
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json().data;
    assert.equal(body.status, 'confirming');
    assert.deepEqual(
      body.proofs.map((proof: { leg: number }) => proof.leg),
      [1, 2],
    );
    assert.equal(body.proof.leg, 1);
    assert.deepEqual(
      (await read(payment.id)).match_details.map((leg: { proof: { status: string } }) => leg.proof.status),
      ['checking', 'checking'],
    );
    await drainVerdicts(t);
    const waiting = await read(payment.id);
    assert.equal(waiting.status, 'confirming', 'slips that passed the local check wait for their sellers');
    assert.deepEqual(
      waiting.match_details.map((leg: { proof: { status: string } }) => leg.proof.status),
      ['awaiting_payee', 'awaiting_payee'],
    );
    assert.equal(await confirmAwaitingLegs(t, [payment.id]), 2);
    const done = await read(payment.id);
    assert.equal(done.status, 'completed');
    assert.deepEqual(
      done.match_details.map((leg: { proof: { status: string } }) => leg.proof.status),
      ['verified', 'verified'],
    );
  });

  it('a `leg` field per upload, in any order: confirming after the first, completed after both are verified', async () => {
    const payment = await twoLegPayment();
    const second = await upload(payment.id, [
      { name: 'leg', value: '2' },
      { name: 'proof', value: newSlip().bytes },
    ]);
    assert.equal(second.statusCode, 200, second.body);
    assert.equal(second.json().data.proof.leg, 2);
    await drainVerdicts(t);
    const half = await read(payment.id);
    assert.equal(half.status, 'confirming', 'one verified leg of two does not complete the payment');
    assert.deepEqual(
      half.match_details.map((leg: { proof: { status: string } | null }) => leg.proof?.status ?? null),
      [null, 'awaiting_payee'],
    );
    const checkout = (await t.call('GET', `/v1/payments/${payment.id}/checkout`, merchant.live)).json().data;
    assert.deepEqual(
      checkout.legs.map((leg: { proof: { status: string } | null }) => leg.proof?.status ?? null),
      [null, 'awaiting_payee'],
      "the checkout view shows each leg's slip",
    );
    const page = await t.request({ method: 'GET', url: `/checkout/${payment.id}?lang=en` });
    assert.equal((page.body.match(/type="file"/g) ?? []).length, 1, 'the hosted page asks only for the missing slip');
    assert.match(page.body, /id="proof-form-1"/);
    const first = await upload(payment.id, [
      { name: 'proof', value: newSlip().bytes },
      { name: 'leg', value: '1' },
    ]);
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().data.proof.leg, 1);
    await drainVerdicts(t);
    assert.equal((await read(payment.id)).status, 'confirming');
    await confirmAwaitingLegs(t, [payment.id]);
    assert.equal((await read(payment.id)).status, 'completed');
  });

  it('one slip for a two-leg payment never completes: at expires_at it waits for the slip under its seller, then ends partially_paid', async () => {
    const before_reserved = await reserved();
    const payment = await twoLegPayment({ expires_in_seconds: 600 });
    assert.equal(await reserved(), before_reserved + 150_000);
    const one = await upload(payment.id, [{ name: 'proof', value: newSlip().bytes }]);
    assert.equal(one.statusCode, 200, one.body);
    assert.equal(one.json().data.proof.leg, 1, 'without `leg`, parts pay the legs without a slip in match_order');
    await drainVerdicts(t);
    assert.equal((await read(payment.id)).status, 'confirming');
    t.clock.advance(600_000);
    assert.equal(await expireDuePayments(t.application.payments), 0, 'a slip waiting for its payee keeps it open');
    assert.equal((await read(payment.id)).status, 'confirming');
    await confirmAwaitingLegs(t, [payment.id]);
    const partly = await read(payment.id);
    assert.deepEqual(
      [partly.status, partly.failure_reason, partly.amount_received],
      ['partially_paid', 'proof_missing', payment.match_details[0]!.allocated_fiat_amount],
    );
    assert.equal(await reserved(), before_reserved, "leg 1's liquidity was used, leg 2's released");
    const events = await t.db
      .selectFrom('events')
      .select('type')
      .where('resource_id', '=', payment.id)
      .orderBy('seq')
      .execute();
    assert.deepEqual(
      events.map((event) => event.type),
      ['payment.matched', 'payment.confirming', 'leg.awaiting_payee', 'payment.partially_paid'],
    );
  });

  it('a confirming payment missing a leg: a late upload is 409, and a read after expires_at leaves it open while its slip is unjudged', async () => {
    const payment = await twoLegPayment({ expires_in_seconds: 600 });
    assert.equal((await upload(payment.id, [{ name: 'proof', value: newSlip().bytes }])).statusCode, 200);
    t.clock.advance(600_000);
    const late = await upload(payment.id, [
      { name: 'leg', value: '2' },
      { name: 'proof', value: newSlip().bytes },
    ]);
    assert.equal(late.statusCode, 409, late.body);
    assert.equal(late.json().error.code, 'PAYMENT_BAD_STATE');
    const open = await read(payment.id);
    assert.deepEqual(
      [open.status, open.match_details[0].proof.status, open.match_details[1].proof],
      ['confirming', 'checking', null],
    );
    await drainVerdicts(t);
    const rejected = await t.admin('POST', `/admin/payments/${payment.id}/legs/1/reject`, {
      reason: 'nothing arrived',
    });
    assert.equal(rejected.statusCode, 200, rejected.body);
    const failed = await read(payment.id);
    assert.deepEqual([failed.status, failed.failure_reason], ['failed', 'receipt_payee_rejected']);
  });

  it('the first rejected leg fails the payment with its reason (a slip without a QR)', async () => {
    const payment = await twoLegPayment();
    const response = await upload(payment.id, [
      { name: 'proof', value: newSlip().bytes },
      { name: 'proof', value: newSlip({ qr: 'none' }).bytes },
    ]);
    assert.equal(response.statusCode, 200, response.body);
    await drainVerdicts(t);
    const failed = await read(payment.id);
    assert.deepEqual([failed.status, failed.failure_reason], ['failed', 'receipt_slip_qr_missing']);
    const [first, second] = failed.match_details.map(
      (leg: { proof: { status: string; reason: string | null } }) => leg.proof,
    );
    assert.deepEqual([second.status, second.reason], ['rejected', 'slip_qr_missing']);
    // Leg 1's slip is good: verified, or never judged when leg 2's verdict failed the payment first.
    assert.ok(first.status === 'verified' || first.status === 'not_checked', first.status);
  });

  it('a slip never judged because another leg failed the payment first reads not_checked, on every read path', async () => {
    const payment = await twoLegPayment();
    const response = await upload(payment.id, [
      { name: 'proof', value: newSlip().bytes },
      { name: 'proof', value: newSlip({ qr: 'none', variant: 2 }).bytes },
    ]);
    assert.equal(response.statusCode, 200, response.body);
    // Leg 1's turn comes later: leg 2's rejection ends the payment before leg 1 is judged.
    await t.db
      .updateTable('payment_proofs')
      .set({ next_attempt_at: new Date(t.clock.now().getTime() + 3600_000) })
      .where('payment_id', '=', payment.id)
      .where('match_order', '=', 1)
      .execute();
    assert.equal(
      (await read(payment.id)).match_details[0].proof.status,
      'checking',
      'while the payment confirms, an unjudged slip is checking',
    );
    await drainVerdicts(t);
    const failed = await read(payment.id);
    assert.deepEqual([failed.status, failed.failure_reason], ['failed', 'receipt_slip_qr_missing']);
    const states = (view: { match_details: { proof: { status: string; reason: string | null } }[] }) =>
      view.match_details.map((leg) => [leg.proof.status, leg.proof.reason]);
    assert.deepEqual(states(failed), [
      ['not_checked', null],
      ['rejected', 'slip_qr_missing'],
    ]);
    const listed = (await t.call('GET', `/v1/payments?order_id=${failed.order_id}`, merchant.live)).json().data;
    assert.deepEqual(states(listed[0]), states(failed));
    const event = await t.event<{ data: Parameters<typeof states>[0] }>(payment.id, 'payment.failed');
    assert.deepEqual(states(event.data), states(failed));
  });

  it('refuses: more parts than legs 400, an unknown leg 400, a leg twice 409, one file for two legs 409; the same file again for its leg replays', async () => {
    const payment = await twoLegPayment();
    const three = await upload(
      payment.id,
      [1, 2, 3].map(() => ({ name: 'proof', value: newSlip().bytes })),
    );
    assert.equal(three.statusCode, 400, three.body);
    assert.equal(three.json().error.code, 'VALIDATION_ERROR');
    const unknown = await upload(payment.id, [
      { name: 'leg', value: '3' },
      { name: 'proof', value: newSlip().bytes },
    ]);
    assert.deepEqual([unknown.statusCode, unknown.json().error.code], [400, 'VALIDATION_ERROR']);
    const bad_leg = await upload(payment.id, [
      { name: 'leg', value: 'first' },
      { name: 'proof', value: newSlip().bytes },
    ]);
    assert.deepEqual([bad_leg.statusCode, bad_leg.json().error.code], [400, 'VALIDATION_ERROR']);
    const same = newSlip().bytes;
    const twice_in_one = await upload(payment.id, [
      { name: 'proof', value: same },
      { name: 'proof', value: same },
    ]);
    assert.deepEqual([twice_in_one.statusCode, twice_in_one.json().error.code], [409, 'PROOF_DUPLICATE']);
    assert.equal((await read(payment.id)).status, 'matched', 'a refused upload changes nothing');
    const first = await upload(payment.id, [
      { name: 'leg', value: '1' },
      { name: 'proof', value: same },
    ]);
    assert.equal(first.statusCode, 200, first.body);
    const replay = await upload(payment.id, [
      { name: 'leg', value: '1' },
      { name: 'proof', value: same },
    ]);
    assert.equal(replay.statusCode, 200, replay.body);
    assert.equal(replay.json().data.proof.id, first.json().data.proof.id);
    const taken = await upload(payment.id, [
      { name: 'leg', value: '1' },
      { name: 'proof', value: newSlip().bytes },
    ]);
    assert.deepEqual([taken.statusCode, taken.json().error.code], [409, 'PAYMENT_BAD_STATE']);
    const other_leg = await upload(payment.id, [
      { name: 'leg', value: '2' },
      { name: 'proof', value: same },
    ]);
    assert.deepEqual([other_leg.statusCode, other_leg.json().error.code], [409, 'PROOF_DUPLICATE']);
    assert.deepEqual(await legsWithSlips(payment.id), [1]);
  });

  it('10 concurrent uploads for one leg: one slip kept, the others 409', async () => {
    const payment = await twoLegPayment();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        upload(payment.id, [
          { name: 'leg', value: '2' },
          { name: 'proof', value: newSlip().bytes },
        ]),
      ),
    );
    assert.deepEqual(answers.map((answer) => answer.statusCode).sort(), [200, ...Array(9).fill(409)]);
    assert.deepEqual(await legsWithSlips(payment.id), [2]);
  });
});
