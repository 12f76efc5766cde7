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
    // leg 1: 70.00 THB at 35 = 2,000,000 micro-PAY, fee 30,000; leg 2: 30.01 THB at 36 = 833,611 micro-PAY, fee 12,504
    assert.deepEqual(
      view.match_details.map((leg: { amount_micro_pay: number }) => leg.amount_micro_pay),
      [2_000_000, 833_611],
    );
    assert.equal(view.fee_micro_pay, 30_000 + 12_504);
    assert.equal(view.fee_minor, 150);
    const fees = (await t.application.ledger.balance(accounts.fees(false))) - fees_before;
    assert.equal(fees, 42_504);
    assert.equal(
      await t.application.ledger.balance(accounts.merchantAvailable(merchant.id, false)),
      2_833_611 - 42_504,
    );
    const completed = await t.db
      .selectFrom('events')
      .select('payload')
      .where('resource_id', '=', id)
      .where('type', '=', 'payment.completed')
      .executeTakeFirstOrThrow();
    assert.equal((completed.payload as { data: { fee_micro_pay: number } }).data.fee_micro_pay, 42_504);
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
    assert.match(csv.split('\r\n')[0]!, /,completed_at,fee_micro_pay$/);
  });
});
