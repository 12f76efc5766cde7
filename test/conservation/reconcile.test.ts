import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accounts } from '../../src/modules/ledger/port.ts';
import { sweepSellOrders } from '../../src/modules/sell-orders/close.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import {
  buyBody,
  createBuy,
  createSell,
  inFlightSell,
  matchAndInstruct,
  merchantCall,
  MINT_SOURCE,
  PAY,
  receipt,
  reconciliationDifferences,
  scriptedValidator,
  sellBody,
} from '../helpers/orders.ts';
import { completedPayments } from '../helpers/payments.ts';
import { createPendingFunds, receipt as pendingReceipt } from '../helpers/pending-funds.ts';

/** DESIGN 3a: GET /admin/ledger/supply (and mpay ledger reconcile) lists every difference between ledger and records. */
describe('reconciliation of the ledger with the business records', () => {
  let t: TestApp;
  let seller: TestMerchant;
  let buyer: TestMerchant;
  const validator = scriptedValidator();
  const differences = () => reconciliationDifferences(t);

  before(async () => {
    t = await startTestApp({
      env: {
        LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE,
        CASH_LEG_RETRY_MAX: '1',
        GATEWAY_DISPUTE_AUTO_OPEN_ENABLED: 'true',
      },
      overrides: { validator },
    });
    seller = await t.createMerchant('Seller');
    buyer = await t.createMerchant('Buyer');
  });
  after(() => t.close());

  it('every flow seeded: the list is empty', async () => {
    assert.deepEqual(await differences(), [], 'a fresh ledger');
    // payments, live (seller funding, legs, fees) and sandbox (synthetic sellers), and a simulated sandbox cycle
    await t.createSeller(thbSeller(10_000_000, '35.00'));
    await completedPayments(t, seller.live, [
      { order_id: 'r-1', amount: 123_456 },
      { order_id: 'r-2', amount: 99 },
    ]);
    await completedPayments(t, seller.test, [{ order_id: 'r-sbx', amount: 5_000 }]);
    assert.equal(
      (await t.call('POST', '/v1/sandbox/payments/simulate', seller.sandbox, { scenario: 'settlement_cycle' }))
        .statusCode,
      201,
    );
    assert.equal((await t.admin('POST', '/admin/settlements/run')).statusCode, 200);
    // a payment that expires and one the ledger never sees
    const open = await t.call('POST', '/v1/trades', seller.live, {
      order_id: 'r-open',
      amount: 1_000,
      currency: 'THB',
      return_url: 'https://shop.example/r',
    });
    assert.equal(open.statusCode, 201, open.body);
    // pending funds confirmed
    const pending = await createPendingFunds(t, seller.id, 2 * PAY);
    assert.equal(pending.statusCode, 201, pending.body);
    validator.next.push('verified');
    assert.equal(
      (
        await t.call(
          'POST',
          `/v1/pending-funds/${pending.json().data.id}/receiver-confirm`,
          seller.live,
          pendingReceipt(),
        )
      ).statusCode,
      201,
    );
    // an audited adjustment, a sell filled and confirmed, a sell whose cash leg fails (reversal, dispute), a cancel
    assert.equal(
      (
        await t.admin('POST', `/admin/merchants/${seller.id}/ledger-adjustments`, {
          amount_micro_pay: 50 * PAY,
          direction: 'credit',
          reason: 'opening',
        })
      ).statusCode,
      201,
    );
    const confirmed = await inFlightSell(t, seller.jwt, buyer.jwt, 4 * PAY);
    validator.next.push('verified');
    const done = await merchantCall(
      t,
      seller.jwt,
      'POST',
      `/v1/merchant-sell-orders/${confirmed.id}/confirm-cash-leg`,
      cashLegReceipt(),
    );
    assert.equal(done.json().data.status, 'completed', done.body);
    const failing = await inFlightSell(t, seller.jwt, buyer.jwt, 3 * PAY);
    validator.next.push('failed');
    await merchantCall(
      t,
      seller.jwt,
      'POST',
      `/v1/merchant-sell-orders/${failing.id}/confirm-cash-leg`,
      cashLegReceipt(),
    );
    await sweepSellOrders(t.application.payouts.sell_orders);
    const cancelled = await createSell(t, seller.jwt, sellBody(PAY, 'AUD', 100));
    await merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${cancelled.id}/cancel`);
    await createSell(t, seller.jwt, sellBody(2 * PAY, 'USD', 200));
    await createBuy(t, buyer.jwt, buyBody(PAY, 'USD', 100));
    await matchAndInstruct(t);
    // a dispute resolved with a mint
    const dispute = (
      await merchantCall(t, seller.jwt, 'POST', '/v1/merchant-disputes', {
        sell_order_id: confirmed.id,
        notes: 'bank reversed it',
      })
    ).json().data.id as string;
    await t.admin('POST', `/admin/disputes/${dispute}/investigate`, {});
    assert.equal(
      (await t.admin('POST', `/admin/disputes/${dispute}/resolve`, { outcome: 'favor_merchant' })).statusCode,
      200,
    );

    assert.deepEqual(await differences(), []);
    assert.equal((await t.admin('GET', '/admin/ledger/verify')).json().data.ok, true);
  });

  it('a transfer through the port with no business row, or an adjustment that bypasses the audit, is listed with its row', async () => {
    const stray = await t.application.ledger.transfer({
      key: 'stray-mint',
      kind: 'mint',
      debit_account: accounts.world(false),
      credit_account: accounts.merchantAvailable(buyer.id, false),
      amount_micro_pay: 7,
    });
    const bypass = await t.application.ledger.transfer({
      key: `adjustment:${buyer.id}:no-audit`,
      kind: 'mint',
      debit_account: accounts.adjustments(false),
      credit_account: accounts.merchantAvailable(buyer.id, false),
      amount_micro_pay: 9,
    });
    const found = await differences();
    assert.deepEqual(
      found.map((d) => [d.problem, d.cause, d.key, d.actual?.transfer_id]),
      [
        ['unexpected', 'adjustment', `adjustment:${buyer.id}:no-audit`, bypass.id],
        // supply, cause by cause: the journal's adjustment and world-mint supply are more than the rows explain
        ['identity', 'adjustment', 'identity:supply:live:adjustment', undefined],
        ['identity', 'pending_funds', 'identity:supply:live:pending_funds', undefined],
        ['unexpected', 'other', 'stray-mint', stray.id],
      ],
    );
    // the daily job exports the count per cause
    await t.application.scheduler.runOnce('ledger-reconcile');
    const metrics = (await t.request({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /mpay_ledger_reconciliation_differences\{cause="adjustment"\} 2/);
    assert.match(metrics, /mpay_ledger_reconciliation_differences\{cause="other"\} 1/);
    assert.match(metrics, /mpay_ledger_reconciliation_differences\{cause="pending_funds"\} 1/);
    assert.match(metrics, /mpay_ledger_reconciliation_differences\{cause="payment_leg"\} 0/);
    // a business row whose transfer went missing: the payment's leg is listed with the payment behind it
    const [id] = await completedPayments(t, seller.live, [{ order_id: 'r-tamper', amount: 3_500 }]);
    await t.db.updateTable('payments').set({ fee_bps: 0 }).where('id', '=', id!).execute();
    const mismatch = (await differences()).filter((d) => d.key.startsWith(`payment:${id}`));
    assert.deepEqual(
      mismatch.map((d) => [d.problem, d.cause]),
      [
        ['mismatch', 'payment_leg'],
        ['unexpected', 'fee'],
      ],
    );
    assert.deepEqual(
      mismatch[0]!.rows.map((row) => row.table),
      ['payments', 'payment_legs'],
    );
    assert.equal(mismatch[0]!.rows[0]!.id, id);
  });
});

const cashLegReceipt = () => ({ receipt_base64: receipt(), content_type: 'application/pdf' });
