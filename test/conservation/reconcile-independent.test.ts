import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { accounts } from '../../src/modules/ledger/port.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import {
  createSell,
  inFlightSell,
  merchantCall,
  PAY,
  receipt,
  reconciliationDifferences,
  scriptedValidator,
  sellBody,
} from '../helpers/orders.ts';

/**
 * DESIGN 3b "Reconciliation is independent": what the journal should hold is derived from the business rows with
 * reconciliation's own arithmetic and account names, so a posting that the code that posts got wrong, and recorded
 * consistently with itself, is still listed.
 */
describe('reconciliation that can disagree with the code that posts', () => {
  let t: TestApp;
  let seller: TestMerchant;
  let buyer: TestMerchant;
  const validator = scriptedValidator();

  before(async () => {
    t = await startTestApp({ overrides: { validator } });
    seller = await t.createMerchant('Seller');
    buyer = await t.createMerchant('Buyer');
    const funded = await t.admin('POST', `/admin/merchants/${seller.id}/ledger-adjustments`, {
      amount_micro_pay: 100 * PAY,
      direction: 'credit',
      reason: 'opening balance',
    });
    assert.equal(funded.statusCode, 201, funded.body);
  });
  after(() => t.close());

  it('lists a posting with the right key and a wrong account, and one with the right key and a wrong amount', async () => {
    assert.deepEqual(await reconciliationDifferences(t), []);
    // A completed sell order, and a dispute on it.
    const sold = await inFlightSell(t, seller.jwt, buyer.jwt, 4 * PAY);
    validator.next.push('verified');
    const confirmed = await merchantCall(
      t,
      seller.jwt,
      'POST',
      `/v1/merchant-sell-orders/${sold.id}/confirm-cash-leg`,
      {
        receipt_base64: receipt(),
        content_type: 'application/pdf',
      },
    );
    assert.equal(confirmed.json().data.status, 'completed', confirmed.body);
    const opened = await merchantCall(t, seller.jwt, 'POST', '/v1/merchant-disputes', {
      sell_order_id: sold.id,
      notes: 'planted',
    });
    assert.equal(opened.statusCode, 201, opened.body);
    const dispute_id = opened.json().data.id as string;
    assert.deepEqual(await reconciliationDifferences(t), []);

    // 1. A builder that names the wrong reserve account (for every caller, reconciliation's old self included): the
    //    sell order's reserve goes to an account that is not the seller's reserve, under the right key.
    const planted_reserve = `live:merchant:${seller.id}:reserve-planted`;
    const original = accounts.merchantReserve;
    mock.method(accounts as { merchantReserve: typeof original }, 'merchantReserve', (id: string, sandbox: boolean) =>
      id === seller.id ? planted_reserve : original(id, sandbox),
    );
    try {
      const sell = await createSell(t, seller.jwt, sellBody(2 * PAY, 'USD', 200));
      // 2. A resolution that moved the wrong amount and recorded the amount it moved: the dispute mints the traded
      //    4 PAY plus one micro-PAY back to the seller, and its row says so.
      const issuance = accounts.mintSource('disputes', false);
      const minted = await t.application.ledger.transfer({
        key: dispute_id,
        kind: 'mint',
        debit_account: issuance,
        credit_account: accounts.merchantAvailable(seller.id, false),
        amount_micro_pay: 4 * PAY + 1,
      });
      await t.db
        .updateTable('disputes')
        .set({
          status: 'resolved',
          outcome: 'favor_merchant',
          ledger_effect: 'mint',
          ledger_amount_micro_pay: 4 * PAY + 1,
          ledger_transfer_id: minted.id,
          resolved_at: t.clock.now(),
        })
        .where('id', '=', dispute_id)
        .execute();

      const found = (await reconciliationDifferences(t)).filter((d) => d.problem === 'mismatch');
      assert.deepEqual(
        found.map((d) => [d.key, d.cause]),
        [
          [dispute_id, 'dispute'],
          [`sell_order:${sell.id}:reserve`, 'sell_order'],
        ].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
      );
      const reserve = found.find((d) => d.key === `sell_order:${sell.id}:reserve`) as any;
      assert.equal(reserve.expected.credit_account, `live:merchant:${seller.id}:reserve`);
      assert.equal(reserve.actual.credit_account, planted_reserve);
      assert.deepEqual(
        reserve.rows.map((row: { table: string; id: string }) => [row.table, row.id]),
        [['sell_orders', sell.id]],
      );
      const resolution = found.find((d) => d.key === dispute_id) as any;
      assert.deepEqual(
        [resolution.expected.amount_micro_pay, resolution.actual.amount_micro_pay],
        [4 * PAY, 4 * PAY + 1],
      );
      assert.equal(resolution.expected.credit_account, resolution.actual.credit_account);
    } finally {
      mock.restoreAll();
    }
  });
});
