import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { expectError, fund, inFlightSell, merchantCall, MINT_SOURCE, PAY, receipt } from '../helpers/orders.ts';
import { scriptedValidator } from '../helpers/validator.ts';

/** Sell orders: the slip is checked against the fill's amount and the seller's destination; the idempotency outcome comes before the provider call. */
describe('sell orders: what confirm-cash-leg asks the validator, and when', () => {
  let t: TestApp;
  let seller: TestMerchant;
  let buyer: TestMerchant;
  const validator = scriptedValidator({ fallback: 'unverified' });
  const body = (content_type = 'application/pdf') => ({ receipt_base64: receipt(), content_type });
  const confirm = (id: string, key: string, payload: unknown) =>
    merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${id}/confirm-cash-leg`, payload, key);

  before(async () => {
    t = await startTestApp({
      env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE, CASH_LEG_RETRY_MAX: '5' },
      overrides: { validator },
    });
    seller = await t.createMerchant('Seller');
    buyer = await t.createMerchant('Buyer');
    await fund(t, seller.id, 100 * PAY);
  });
  after(() => t.close());

  it("asks the validator for the fill's fiat amount paid into the seller's own payout destination", async () => {
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, 2 * PAY);
    validator.next.push('verified');
    const response = await confirm(sell.id, randomUUID(), body());
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().data.status, 'completed');
    assert.equal(validator.checks.length, 1);
    // inFlightSell prices the whole order at 1 satang: the one fill's fiat amount.
    assert.equal(validator.checks[0]!.expected_amount_minor, 1);
    assert.equal(validator.checks[0]!.currency, 'THB');
    assert.deepEqual(
      validator.checks[0]!.receiver,
      { promptpay_id: '0812345678' },
      'the seller is the payee, never the buyer',
    );
  });

  it('a replay and a conflicting reuse of the key are decided before the validator: no provider call, no attempt', async () => {
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, 3 * PAY);
    const key = randomUUID();
    const calls = validator.checks.length;
    const evidence = body();
    const first = await confirm(sell.id, key, evidence);
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual([first.json().data.status, first.json().data.cash_leg_attempts], ['cash_leg_in_flight', 1]);
    assert.equal(validator.checks.length, calls + 1);

    const replay = await confirm(sell.id, key, evidence);
    assert.equal(replay.statusCode, 200);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replay.json(), first.json());
    assert.equal(validator.checks.length, calls + 1, 'a replay never reaches the validator');

    expectError(await confirm(sell.id, key, body('image/png')), 409, 'IDEMPOTENCY_KEY_CONFLICT');
    assert.equal(validator.checks.length, calls + 1, 'a conflict never reaches the validator');
    const attempts = await t.db
      .selectFrom('sell_order_cash_leg_attempts')
      .select('id')
      .where('sell_order_id', '=', sell.id)
      .execute();
    assert.equal(attempts.length, 1);
  });
});
