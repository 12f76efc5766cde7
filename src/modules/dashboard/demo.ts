import type { Application } from '../../app.ts';
import { randomBase62 } from '../../lib/crypto.ts';
import { adjustMerchantLedger } from '../ledger/adjustments.ts';
import { createPendingFunds } from '../pending-funds/service.ts';
import { simulatePayment, type Scenario } from '../sandbox/service.ts';
import { createActiveUser } from './users.ts';

export const DEMO_USER_EMAIL = 'demo@merchant.example';

/** A PNG signature and a few bytes: what the null validator needs to accept the demo's receipt. */
const DEMO_RECEIPT = Buffer.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52,
]).toString('base64');

/**
 * First start: a demo dashboard owner and enough data that the dashboard is not empty: PAY on both modes, a few
 * sandbox payments (one settled into a batch) and live pending funds to confirm. Every row goes through the same
 * service functions the API uses. Returns the sign-in details the banner prints.
 */
export async function bootstrapDashboardDemo(
  application: Application,
  merchant_id: string,
): Promise<{ email: string; password: string; sign_in_url: string }> {
  const { db } = application.database;
  const { clock, config } = application;
  const password = randomBase62(20);
  await createActiveUser({ db, clock, public_base_url: config.public_base_url }, merchant_id, {
    email: DEMO_USER_EMAIL,
    role: 'owner',
    password,
  });
  const actor = { actor_user_id: 'first-start', actor_role: 'super_admin' };
  for (const is_sandbox of [false, true]) {
    await adjustMerchantLedger(
      { db, clock, ledger: application.ledger },
      actor,
      merchant_id,
      { amount_micro_pay: 1_000_000_000, direction: 'credit', reason: 'demo funds', is_sandbox },
      `demo-${is_sandbox}`,
    );
  }
  const sandbox = {
    clock,
    public_base_url: config.public_base_url,
    settlement_fee_bps: config.settlement_fee_bps,
    completion: application.payments.completion,
  };
  const scenarios: [Scenario, number][] = [
    ['settlement_cycle', 125_000],
    ['matched_then_completed', 49_900],
    ['matched_then_completed', 8_750],
    ['matched_then_failed', 30_000],
    ['matched_partial_fill', 200_000],
    ['expired', 15_000],
  ];
  for (const [scenario, amount] of scenarios) {
    await db
      .transaction()
      .execute((trx) =>
        simulatePayment(sandbox, trx, { merchant_id, is_sandbox: true }, { scenario, amount, currency: 'THB' }),
      );
  }
  await createPendingFunds(
    {
      db,
      clock,
      ledger: application.ledger,
      validator: application.validator,
      max_attempts: config.receiver_confirm_max_attempts,
      ttl_hours: config.pending_funds_ttl_hours,
      window_hours: config.receiver_confirm_window_hours,
    },
    {
      receiver_merchant_id: merchant_id,
      amount_minor: 250_000_000,
      payer_reference: 'demo-payer-1',
      receipt_base64: DEMO_RECEIPT,
      content_type: 'image/png',
    },
  );
  return { email: DEMO_USER_EMAIL, password, sign_in_url: `${config.public_base_url}/dashboard/sign-in` };
}
