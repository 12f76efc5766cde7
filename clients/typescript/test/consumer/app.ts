// A merchant's program using the installed package (test/package.test.ts packs, installs, type-checks and runs
// it on Node 20 and 24). It prints one JSON line of what it saw.
import { Mpay, MpayApiError, type Payment, type SellOrder } from '@mpay/client';
import { computeServiceSignature, verifyWebhook } from '@mpay/client/webhooks';

const [base_url, live_key, sandbox_key, run] = process.argv.slice(2) as [string, string, string, string];
const mpay = new Mpay({ apiKey: live_key, baseUrl: base_url });

const created = await mpay.payments.create({
  order_id: `${run}-order-1`,
  amount: '250.00',
  currency: 'THB',
  return_url: 'https://shop.example/return',
});
const payment: Payment = created.data;
const found = await mpay.payments.findByOrderId(`${run}-order-1`);
let listed = 0;
for await (const item of mpay.payments.list({ limit: 1 })) listed += item.id ? 1 : 0;

// Merchant routes with the same secret key: the client trades it for a JWT on its own.
const before = (await mpay.balance.retrieve()).data.available_micro_pay;
const sell: SellOrder = (
  await mpay.sellOrders.create({
    amount_micro_pay: 2_000_000,
    currency: 'PAY',
    target_currency: 'THB',
    target_fiat_amount: 7_000,
    payout_destination: { rail: 'promptpay', promptpay_id: '0812345678' },
  })
).data;
const dispute = (await mpay.disputes.create({ sell_order_id: sell.id, notes: 'Checked from the installed package' }))
  .data;
const disputes = (await mpay.disputes.list()).data.map((row) => row.id);
const after = (await mpay.balance.retrieve()).data.available_micro_pay;
const buys = (await mpay.buyOrders.list()).data.length;

const sandbox = new Mpay(sandbox_key, { baseUrl: base_url });
const sandbox_balance = (await sandbox.balance.retrieve()).data.available_micro_pay;
const sandbox_sells = (await sandbox.sellOrders.list()).data.map((row) => row.is_sandbox);
const simulated = (
  await sandbox.sandbox.simulatePayment({ scenario: 'matched_then_completed', amount: 10_000, currency: 'THB' })
).data.payment;

let error_code = '';
try {
  await mpay.payments.retrieve('00000000-0000-4000-8000-000000000000');
} catch (error) {
  if (error instanceof MpayApiError) error_code = `${error.status} ${error.code}`;
}

const body = JSON.stringify({
  id: 'evt_1',
  event: 'payment.completed',
  type: 'payment.completed',
  data: { id: payment.id },
});
const event = verifyWebhook(
  body,
  { 'x-service-signature': computeServiceSignature(body, 'whsec_test') },
  'whsec_test',
  { scheme: 'service' },
);

// The types are the API's: these lines must not compile.
const not_a_currency = {
  order_id: 'x',
  amount: 1,
  // @ts-expect-error: EUR is not a currency the API takes
  currency: 'EUR' satisfies Parameters<typeof mpay.payments.create>[0]['currency'],
  return_url: 'https://shop.example',
};
void not_a_currency;
// @ts-expect-error: there is no such resource method
mpay.payments.charge;

process.stdout.write(
  `${JSON.stringify({
    node: process.versions.node.split('.')[0],
    payment: { status: payment.status, amount: payment.amount, found: found?.id === payment.id },
    listed,
    before,
    after,
    sell: sell.status,
    dispute: dispute.status,
    disputes_listed: disputes.includes(dispute.id),
    buys,
    sandbox_balance,
    sandbox_sells,
    simulated: simulated.status,
    error_code,
    webhook: event.type,
  })}\n`,
);
