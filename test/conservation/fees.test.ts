import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accounts } from '../../src/modules/ledger/port.ts';
import { runSettlements } from '../../src/modules/settlements/service.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { multipartParts } from '../helpers/files.ts';
import { completedPayments, confirmAwaitingLegs, drainVerdicts, settlementDeps } from '../helpers/payments.ts';
import { newSlip } from '../helpers/slips.ts';

/** DESIGN 3a "Fees": taken at completion as ledger postings; the settlement batch reports the same fees. */
describe('fees are taken at completion and reported by the same figures in settlements', () => {
  let t: TestApp;
  let merchant: TestMerchant;

  before(async () => {
    t = await startTestApp({ env: { SETTLEMENT_FEE_BPS: '150' } });
    merchant = await t.createMerchant('Fees');
    // Two offers: 70.00 THB at 35.00 THB/PAY (2 PAY), the rest at 36.00 THB/PAY: a 100.01 THB payment has two legs.
    await t.createSeller(thbSeller(7_000, '35.00'));
    await t.createSeller(thbSeller(1_000_000, '36.00', '0899999999'));
  });
  after(() => t.close());

  it('each leg credits the merchant its PAY less the fee (rounded down) and the fees account the fee', async () => {
    const fees_before = await t.application.ledger.balance(accounts.fees(false));
    const created = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: 'fee-1',
      amount: 10_001,
      currency: 'THB',
      return_url: 'https://shop.example/return',
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().data.id as string;
    // one slip per payee
    const { payload, headers } = multipartParts([
      { name: 'proof', value: newSlip().bytes },
      { name: 'proof', value: newSlip().bytes },
    ]);
    const upload = await t.request({
      method: 'POST',
      url: `/v1/payments/${id}/proof`,
      headers: { 'x-api-key': merchant.live, ...headers },
      payload,
    });
    assert.equal(upload.statusCode, 200, upload.body);
    await drainVerdicts(t);
    await confirmAwaitingLegs(t);
    const view = (await t.call('GET', `/v1/payments/${id}`, merchant.live)).json().data;
    assert.equal(view.match_details.length, 2);
    // One fee in two units, leg by leg: leg 1 is 70.00 THB at 35 = 2,000,000 micro-PAY, its fee 1.05 THB = 30,000
    // micro-PAY at 35; leg 2 is 30.01 THB at 36 = 833,611 micro-PAY, its fee 0.45 THB (0.45015 rounded down) = 12,500
    // micro-PAY at 36 (a fee taken on the PAY, 12,504, would be 0.4501 THB: no longer the fiat fee).
    assert.deepEqual(
      view.match_details.map((leg: { amount_micro_pay: number }) => leg.amount_micro_pay),
      [2_000_000, 833_611],
    );
    assert.equal(view.fee_micro_pay, 30_000 + 12_500);
    assert.equal(view.fee_minor, 105 + 45);
    const leg_fees = await t.db
      .selectFrom('ledger_transfers')
      .select(['key', 'amount_micro_pay'])
      .where('key', 'like', `payment:${id}:leg:%:fee`)
      .orderBy('key')
      .execute();
    assert.deepEqual(
      leg_fees.map((row) => Number(row.amount_micro_pay)),
      [30_000, 12_500],
    );
    const fees = (await t.application.ledger.balance(accounts.fees(false))) - fees_before;
    assert.equal(fees, 42_500);
    assert.equal(
      await t.application.ledger.balance(accounts.merchantAvailable(merchant.id, false)),
      2_833_611 - 42_500,
    );
    const completed = await t.db
      .selectFrom('events')
      .select('payload')
      .where('resource_id', '=', id)
      .where('type', '=', 'payment.completed')
      .executeTakeFirstOrThrow();
    assert.equal((completed.payload as { data: { fee_micro_pay: number } }).data.fee_micro_pay, 42_500);
    assert.equal((await t.admin('GET', '/admin/ledger/verify')).json().data.ok, true);
  });

  it('a settlement batch reports the fees the ledger took, to the micro-PAY', async () => {
    const other = await t.createMerchant('Fees 2');
    const ids = await completedPayments(t, other.live, [
      { order_id: 's-1', amount: 3_333 },
      { order_id: 's-2', amount: 12_345 },
      { order_id: 's-3', amount: 99 },
    ]);
    const payments = await t.db
      .selectFrom('payments')
      .select(['fee_minor', 'fee_micro_pay'])
      .where('id', 'in', ids)
      .execute();
    const [batch] = (await runSettlements(settlementDeps(t))).filter((made) => made.merchant_id === other.id);
    assert.ok(batch);
    const ledger_fees = await t.db
      .selectFrom('ledger_transfers')
      .select((eb) => eb.fn.sum<string>('amount_micro_pay').as('total'))
      .where('credit_account', '=', accounts.fees(false))
      .where((eb) => eb.or(ids.map((id) => eb('key', 'like', `payment:${id}:leg:%:fee`))))
      .executeTakeFirstOrThrow();
    assert.equal(batch.fee_micro_pay, Number(ledger_fees.total));
    assert.equal(
      batch.fee_micro_pay,
      payments.reduce((sum, row) => sum + (row.fee_micro_pay ?? 0), 0),
    );
    assert.equal(
      batch.fee_minor,
      payments.reduce((sum, row) => sum + (row.fee_minor ?? 0), 0),
    );
    const items = (await t.call('GET', `/v1/settlements/${batch.id}/payments`, other.live)).json().data;
    assert.equal(
      items.reduce((sum: number, item: { fee_micro_pay: number }) => sum + item.fee_micro_pay, 0),
      batch.fee_micro_pay,
    );
    const csv = (await t.call('GET', `/v1/settlements/${batch.id}/export.csv`, other.live)).body;
    assert.match(csv.split('\r\n')[0]!, /,completed_at,fee_micro_pay,refunded_minor,refunded$/);
  });

  it('a sandbox completion posts its legs and its fee on the sandbox ledger, and its statement reports them', async () => {
    const sandbox_merchant = await t.createMerchant('Fees sandbox');
    const fees_before = await t.application.ledger.balance(accounts.fees(true));
    const live_fees_before = await t.application.ledger.balance(accounts.fees(false));
    const simulated = await t.call('POST', '/v1/sandbox/payments/simulate', sandbox_merchant.sandbox, {
      scenario: 'settlement_cycle',
      amount: 12_345,
      currency: 'THB',
    });
    assert.equal(simulated.statusCode, 201, simulated.body);
    const payment = simulated.json().data.payment;
    assert.equal(payment.status, 'settled');
    assert.equal(payment.fee_minor, 185, 'floor(12,345 x 1.5 %)');
    assert.ok(payment.fee_micro_pay > 0);
    const postings = await t.db
      .selectFrom('ledger_transfers')
      .select(['key', 'kind', 'debit_account', 'credit_account', 'amount_micro_pay'])
      .where('key', 'like', `payment:${payment.id}:%`)
      .orderBy('key')
      .execute();
    const leg = payment.match_details[0];
    assert.deepEqual(
      postings.map((row) => [row.key, row.kind, row.credit_account, Number(row.amount_micro_pay)]),
      [
        [
          `payment:${payment.id}:leg:1`,
          'transfer',
          accounts.merchantAvailable(sandbox_merchant.id, true),
          leg.amount_micro_pay - payment.fee_micro_pay,
        ],
        [`payment:${payment.id}:leg:1:fee`, 'transfer', accounts.fees(true), payment.fee_micro_pay],
        [`payment:${payment.id}:leg:1:fund`, 'mint', postings[2]?.credit_account, leg.amount_micro_pay],
      ],
    );
    assert.equal((await t.application.ledger.balance(accounts.fees(true))) - fees_before, payment.fee_micro_pay);
    assert.equal(await t.application.ledger.balance(accounts.fees(false)), live_fees_before, 'live untouched');
    const [batch] = (await t.call('GET', '/v1/settlements', sandbox_merchant.sandbox)).json().data;
    assert.deepEqual([batch.fee_minor, batch.fee_micro_pay], [185, payment.fee_micro_pay]);
    const supply = (await t.admin('GET', '/admin/ledger/supply')).json().data;
    assert.deepEqual(supply.differences, []);
  });
});
