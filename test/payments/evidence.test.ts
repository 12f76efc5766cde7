import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { accounts } from '../../src/modules/ledger/port.ts';
import { feeOf, paymentFee } from '../../src/modules/payments/fees.ts';
import { expireDuePayments } from '../../src/modules/payments/service.ts';
import { dailyPaymentStats } from '../../src/modules/payments/stats.ts';
import { runSettlements } from '../../src/modules/settlements/service.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { multipartParts } from '../helpers/files.ts';
import { reconciliationDifferences } from '../helpers/orders.ts';
import { drainVerdicts, settlementDeps } from '../helpers/payments.ts';
import { newSlip } from '../helpers/slips.ts';
import { scriptedValidator } from '../helpers/validator.ts';

/**
 * DESIGN 3b "Evidence of a live payment leg" and "Partly paid": a live leg completes only on a provider's verified
 * check or its payee's confirmation; a leg whose slip passed checks that prove nothing waits for its seller; a payment
 * whose verified legs would otherwise be lost ends partially_paid with what it received.
 */
describe('evidence of a live payment leg, and partially_paid', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let order = 0;
  const validator = scriptedValidator();

  before(async () => {
    t = await startTestApp({ overrides: { validator } });
    merchant = await t.createMerchant('Evidence');
  });
  after(() => t.close());

  async function payment(legs: 1 | 2, key = merchant.live, expires_in_seconds = 900) {
    if (key === merchant.live) {
      // Fresh sellers only: what earlier cases left of their sellers' liquidity must not change the split.
      await t.db.updateTable('sellers').set({ active: false }).execute();
      await t.createSeller(thbSeller(100_000, '35.00', '0811111111'));
      if (legs === 2) await t.createSeller(thbSeller(50_000, '35.00', '0822222222'));
    }
    const created = await t.call('POST', '/v1/trades', key, {
      order_id: `ev-${++order}`,
      amount: legs === 2 ? 150_000 : 100_000,
      currency: 'THB',
      return_url: 'https://shop.example/r',
      expires_in_seconds,
    });
    assert.equal(created.statusCode, 201, created.body);
    const view = created.json().data;
    if (key === merchant.live) assert.equal(view.match_details.length, legs, created.body);
    return view as {
      id: string;
      amount: number;
      amount_received: number;
      match_details: {
        match_order: number;
        seller_id: string;
        allocated_fiat_amount: number;
        rate: string;
        amount_micro_pay: number;
      }[];
    };
  }
  const upload = async (id: string, leg?: number, key = merchant.live) => {
    const { payload, headers } = multipartParts([
      ...(leg ? [{ name: 'leg', value: String(leg) }] : []),
      { name: 'proof', value: newSlip().bytes },
    ]);
    const response = await t.request({
      method: 'POST',
      url: `/v1/payments/${id}/proof`,
      payload,
      headers: { ...headers, 'x-api-key': key },
    });
    assert.equal(response.statusCode, 200, response.body);
  };
  const read = async (id: string, key = merchant.live) => (await t.call('GET', `/v1/payments/${id}`, key)).json().data;
  const available = () => t.application.ledger.balance(accounts.merchantAvailable(merchant.id, false));

  it("a provider's verified check completes a live leg at once; amount_received is 0 before and the amount after", async () => {
    validator.kind = 'easyslip';
    const p = await payment(1);
    assert.equal(p.amount_received, 0);
    await upload(p.id);
    await drainVerdicts(t);
    const done = await read(p.id);
    assert.deepEqual([done.status, done.amount_received], ['completed', p.amount]);
  });

  for (const kind of ['null_validator', 'slip_qr'] as const) {
    it(`${kind}'s verified is no evidence for a live leg: it waits for its payee, past expires_at, until confirmed`, async () => {
      validator.kind = kind;
      const p = await payment(1);
      await upload(p.id);
      await drainVerdicts(t);
      const waiting = await read(p.id);
      assert.deepEqual(
        [waiting.status, waiting.match_details[0].proof.status, waiting.amount_received],
        ['confirming', 'awaiting_payee', 0],
      );
      const event = await t.event<{ data: Record<string, unknown> }>(p.id, 'leg.awaiting_payee');
      assert.equal(event.data.match_order, 1);
      assert.equal(event.data.amount_minor, p.amount);
      assert.equal(event.data.seller_id, p.match_details[0]!.seller_id);
      t.clock.advance(2 * 3_600_000);
      await expireDuePayments(t.application.payments);
      assert.equal((await read(p.id)).status, 'confirming', 'a leg waiting for its payee never expires');
      const before = await available();
      const confirmed = await t.admin('POST', `/admin/payments/${p.id}/legs/1/confirm`);
      assert.equal(confirmed.statusCode, 200, confirmed.body);
      assert.deepEqual([confirmed.json().data.status, confirmed.json().data.decided_by], ['verified', 'operator']);
      const done = await read(p.id);
      assert.deepEqual([done.status, done.amount_received], ['completed', p.amount]);
      const leg = p.match_details[0]!;
      const fee = paymentFee({ currency: 'THB' }, [leg], 150);
      assert.equal((await available()) - before, leg.amount_micro_pay - fee.fee_micro_pay);
      const audit = await t.db
        .selectFrom('admin_audit_log')
        .select(['action', 'actor_user_id'])
        .where('target_id', '=', p.id)
        .execute();
      assert.deepEqual(audit, [{ action: 'payment.leg.confirm', actor_user_id: 'ops-1' }]);
      const again = await t.admin('POST', `/admin/payments/${p.id}/legs/1/confirm`);
      assert.deepEqual([again.statusCode, again.json().error.code], [409, 'LEG_NOT_AWAITING_PAYEE']);
      const unknown = await t.admin('POST', `/admin/payments/${p.id}/legs/2/confirm`);
      assert.deepEqual([unknown.statusCode, unknown.json().error.code], [404, 'NOT_FOUND']);
    });
  }

  it('sandbox keeps its automatic verdicts: a checked-nothing verified completes a sandbox payment', async () => {
    validator.kind = 'null_validator';
    const p = await payment(1, merchant.test);
    await upload(p.id, undefined, merchant.test);
    await drainVerdicts(t);
    assert.equal((await read(p.id, merchant.test)).status, 'completed');
  });

  it('a rejection after another leg was verified ends partially_paid: the verified leg completes with its own fee, the other releases', async () => {
    validator.kind = 'easyslip';
    const stats = async () =>
      (await dailyPaymentStats(t.db, { merchant_id: merchant.id, is_sandbox: false }, new Date(0)))
        .filter((row) => row.currency === 'THB')
        .reduce(
          (sum, row) => ({
            count: sum.count + row.count,
            completed_count: sum.completed_count + row.completed_count,
            completed_amount_minor: sum.completed_amount_minor + row.completed_amount_minor,
          }),
          { count: 0, completed_count: 0, completed_amount_minor: 0 },
        );
    const stats_before = await stats();
    const p = await payment(2);
    const [one, two] = p.match_details as [(typeof p.match_details)[0], (typeof p.match_details)[0]];
    const before = await available();
    await upload(p.id, 1);
    await drainVerdicts(t);
    assert.equal((await read(p.id)).status, 'confirming');
    validator.next = ['failed'];
    await upload(p.id, 2);
    await drainVerdicts(t);
    const partly = await read(p.id);
    assert.deepEqual(
      [partly.status, partly.failure_reason, partly.amount_received],
      ['partially_paid', 'receipt_amount_mismatch', one.allocated_fiat_amount],
    );
    assert.deepEqual(
      partly.match_details.map((leg: { proof: { status: string } }) => leg.proof.status),
      ['verified', 'rejected'],
    );
    const fee = paymentFee({ currency: 'THB' }, [one], 150);
    assert.ok(fee.fee_micro_pay > 0);
    assert.deepEqual(
      [partly.fee_minor, partly.fee_micro_pay],
      [fee.fee_minor, fee.fee_micro_pay],
      'the fee of the verified leg alone',
    );
    assert.equal((await available()) - before, one.amount_micro_pay - fee.fee_micro_pay);
    const sellers = await t.db
      .selectFrom('sellers')
      .select(['id', 'reserved_minor'])
      .where('id', 'in', [one.seller_id, two.seller_id])
      .execute();
    assert.ok(
      sellers.every((seller) => Number(seller.reserved_minor) === 0),
      'nothing stays reserved',
    );
    assert.deepEqual(
      await stats(),
      {
        count: stats_before.count + 1,
        completed_count: stats_before.completed_count + 1,
        completed_amount_minor: stats_before.completed_amount_minor + one.allocated_fiat_amount,
      },
      "the dashboard's figures count a partly paid payment as succeeded, with what it received",
    );
    const event = await t.event<{ data: { status: string; amount_received: number } }>(p.id, 'payment.partially_paid');
    assert.deepEqual([event.data.status, event.data.amount_received], ['partially_paid', one.allocated_fiat_amount]);
    assert.deepEqual(await reconciliationDifferences(t), []);

    // What the payment received is what can go back (DESIGN 3c): never more, and a refund from PAY holds the
    // verified leg's PAY for its share, not the whole payment's.
    const refund = (body: object) =>
      t.request({
        method: 'POST',
        url: `/v1/payments/${p.id}/refunds`,
        headers: { 'x-api-key': merchant.live, 'idempotency-key': randomUUID() },
        payload: body,
      });
    const over = await refund({ amount: one.allocated_fiat_amount + 1 });
    assert.deepEqual([over.statusCode, over.json().error.code], [409, 'REFUND_EXCEEDS_PAYMENT']);
    const half = Math.floor(one.allocated_fiat_amount / 2);
    const held = await refund({ amount: half, funding: 'pay_balance' });
    assert.equal(held.statusCode, 201, held.body);
    assert.equal(
      held.json().data.amount_micro_pay,
      Math.ceil((one.amount_micro_pay * half) / one.allocated_fiat_amount),
    );
    const rest = await refund({});
    assert.equal(rest.statusCode, 201, rest.body);
    assert.equal(rest.json().data.amount, one.allocated_fiat_amount - half);
    assert.deepEqual(await reconciliationDifferences(t), []);
  });

  it('a leg verified while the other got no slip by expires_at ends partially_paid at the sweep; settlements take what it received', async () => {
    validator.kind = 'easyslip';
    const p = await payment(2, merchant.live, 600);
    await upload(p.id, 2);
    await drainVerdicts(t);
    t.clock.advance(599_000);
    assert.equal(await expireDuePayments(t.application.payments), 0);
    t.clock.advance(1_000);
    assert.equal(await expireDuePayments(t.application.payments), 1);
    const partly = await read(p.id);
    const two = p.match_details[1]!;
    assert.deepEqual(
      [partly.status, partly.failure_reason, partly.amount_received],
      ['partially_paid', 'proof_missing', two.allocated_fiat_amount],
    );
    assert.deepEqual(await reconciliationDifferences(t), []);
    t.clock.advance(3_600_000);
    await runSettlements(settlementDeps(t));
    const item = await t.db
      .selectFrom('settlement_items')
      .select(['amount_minor', 'fee_minor'])
      .where('payment_id', '=', p.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      [Number(item.amount_minor), Number(item.fee_minor)],
      [two.allocated_fiat_amount, feeOf(two.allocated_fiat_amount, 150)],
    );
    const settled = await read(p.id);
    assert.deepEqual([settled.status, settled.amount_received], ['partially_paid', two.allocated_fiat_amount]);
  });

  it('ALLOW_UNVERIFIED_LIVE_PROOFS and PROOF_CHECK_HOURS are validated at start-up', () => {
    assert.equal(loadConfig({}).allow_unverified_live_proofs, false);
    assert.equal(loadConfig({}).proof_check_hours, 24);
    assert.throws(() => loadConfig({ ALLOW_UNVERIFIED_LIVE_PROOFS: 'perhaps' }), /ALLOW_UNVERIFIED_LIVE_PROOFS/);
    assert.throws(() => loadConfig({ PROOF_CHECK_HOURS: '0' }), /PROOF_CHECK_HOURS/);
  });
});

describe('ALLOW_UNVERIFIED_LIVE_PROOFS=true', () => {
  it("lets a checked-nothing verdict complete a live leg (the operator's explicit opt-in)", async () => {
    const validator = scriptedValidator({ kind: 'null_validator' });
    const t = await startTestApp({ env: { ALLOW_UNVERIFIED_LIVE_PROOFS: 'true' }, overrides: { validator } });
    try {
      const merchant = await t.createMerchant('Opt-in');
      await t.createSeller(thbSeller(100_000));
      const created = await t.call('POST', '/v1/trades', merchant.live, {
        order_id: 'opt-in',
        amount: 10_000,
        currency: 'THB',
        return_url: 'https://shop.example/r',
      });
      const { payload, headers } = multipartParts([{ name: 'proof', value: newSlip().bytes }]);
      const id = created.json().data.id;
      await t.request({
        method: 'POST',
        url: `/v1/payments/${id}/proof`,
        payload,
        headers: { ...headers, 'x-api-key': merchant.live },
      });
      await drainVerdicts(t);
      assert.equal((await t.call('GET', `/v1/payments/${id}`, merchant.live)).json().data.status, 'completed');
    } finally {
      await t.close();
    }
  });
});
