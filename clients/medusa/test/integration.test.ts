/**
 * Medusa's payment module on PostgreSQL (`moduleIntegrationTestRunner` of `@medusajs/test-utils`, as Medusa tests
 * its own providers) with this package registered as a provider, against the real gateway: a payment collection and
 * a session, the buyer pays through the sandbox, the gateway's signed webhook is handed to the module's webhook
 * handler and acted on as Medusa's `processPaymentWorkflow` does, and the session ends authorized and captured; then
 * a refund. Each step prints what Medusa's payment session and payment rows say.
 *
 * The runner is written for Jest's globals; Node's test runner provides the same hooks under these names. Medusa
 * prints "Error initializing link modules ... Cannot find module '@medusajs/medusa/link-modules'" as a warning: the
 * payment module alone has no links, and `@medusajs/medusa` is not installed here.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import * as nodeTest from 'node:test';
import { startGateway, type Gateway } from './helpers.ts';

const require = createRequire(import.meta.url);
const { moduleIntegrationTestRunner } = require('@medusajs/test-utils') as typeof import('@medusajs/test-utils');
const { Modules, PaymentActions } = require('@medusajs/framework/utils') as typeof import('@medusajs/framework/utils');
type IPaymentModuleService = import('@medusajs/framework/types').IPaymentModuleService;
type WebhookActionResult = import('@medusajs/framework/types').WebhookActionResult;

Object.assign(globalThis, {
  describe: nodeTest.describe,
  it: nodeTest.it,
  beforeAll: nodeTest.before,
  afterAll: nodeTest.after,
  beforeEach: nodeTest.beforeEach,
  afterEach: nodeTest.afterEach,
});

process.env['DB_HOST'] ??= '127.0.0.1';
process.env['DB_USERNAME'] ??= 'postgres';
process.env['DB_PASSWORD'] ??= '';
const DB_NAME = `medusa_mpay_${process.pid}_${Date.now()}`;
const PROVIDER = 'pp_mpay-promptpay_mpay';

/** One line per step: the session's and the payment's rows as the module returns them. */
function show(step: string, rows: Record<string, unknown>): void {
  console.log(`\n-- ${step}\n${JSON.stringify(rows, null, 2)}`);
}

/** What Medusa's processPaymentWorkflow does with a webhook action for a session that no cart holds. */
async function processWebhookAction(service: IPaymentModuleService, result: WebhookActionResult): Promise<void> {
  const session_id = result.data?.session_id;
  if (!session_id) return;
  const [existing] = await service.listPayments({ payment_session_id: session_id });
  if (result.action === PaymentActions.SUCCESSFUL) {
    const payment = existing ?? (await service.authorizePaymentSession(session_id, {}));
    assert.ok(payment, 'the session was authorized');
    await service.capturePayment({ payment_id: payment.id, amount: result.data!.amount });
  } else if (result.action === PaymentActions.AUTHORIZED && !existing) {
    await service.authorizePaymentSession(session_id, {});
  }
}

const postgres = await import('pg')
  .then(async ({ default: pg }) => {
    const client = new pg.Client({
      host: process.env['DB_HOST'],
      user: process.env['DB_USERNAME'],
      database: 'postgres',
    });
    await client.connect();
    await client.end();
    return true;
  })
  .catch((error: Error) => error.message);
if (postgres !== true && !process.env['CI']) {
  console.log(
    `SKIP the Medusa integration test: PostgreSQL is not reachable at ${process.env['DB_HOST']} (${postgres})`,
  );
} else {
  const gateway: Gateway = await startGateway();
  nodeTest.after(async () => {
    await gateway.stop();
    const { default: pg } = await import('pg');
    const client = new pg.Client({
      host: process.env['DB_HOST'],
      user: process.env['DB_USERNAME'],
      database: 'postgres',
    });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS "${DB_NAME}" WITH (FORCE)`);
    await client.end();
  });

  moduleIntegrationTestRunner<IPaymentModuleService>({
    moduleName: Modules.PAYMENT,
    dbName: DB_NAME,
    // the payment module's own package: its models make the schema, and it is the module that is loaded
    resolve: dirname(require.resolve('@medusajs/payment/package.json')),
    moduleOptions: {
      providers: [
        {
          // the package as a shop installs it (package.json main: dist/index.js)
          resolve: resolve(import.meta.dirname, '..'),
          id: 'mpay',
          options: {
            baseUrl: gateway.baseUrl,
            apiKey: gateway.testKey,
            webhookSecret: gateway.webhookSecret,
            returnUrl: 'https://shop.example/order/confirmed',
          },
        },
      ],
    },
    testSuite: ({ service }) => {
      nodeTest.it(
        'a sandbox order paid end to end: session pending, webhook, authorized and captured, refunded',
        async () => {
          const providers = await service.listPaymentProviders();
          assert.deepEqual(providers.map((provider) => provider.id).sort(), [
            'pp_mpay-bank-transfer_mpay',
            'pp_mpay-payid_mpay',
            'pp_mpay-promptpay_mpay',
            'pp_system_default',
          ]);

          const collection = await service.createPaymentCollections({ currency_code: 'thb', amount: 250.5 });
          const created = await service.createPaymentSession(collection.id, {
            provider_id: PROVIDER,
            amount: 250.5,
            currency_code: 'thb',
            data: {},
          });
          const payment_id = created.data['id'] as string;
          show('1. session created (initiatePayment: POST /v1/trades)', {
            session: { id: created.id, status: created.status, amount: created.amount, data: created.data },
          });
          assert.equal(created.status, 'pending');
          assert.equal(created.data['order_id'], created.id);
          assert.equal(created.data['amount'], 25050);
          assert.match(String(created.data['checkout_url']), /\/checkout\/sbx_/);

          // The storefront completes the cart before the buyer has paid: not authorized, the session stays pending.
          await assert.rejects(service.authorizePaymentSession(created.id, {}), /was not authorized with the provider/);
          const waiting = await service.retrievePaymentSession(created.id);
          show('2. authorize before the buyer paid', {
            session: { id: waiting.id, status: waiting.status, gateway_status: waiting.data['status'] },
            payments: await service.listPayments({ payment_session_id: created.id }),
          });
          assert.equal(waiting.status, 'pending');

          // The buyer pays the PromptPay QR and uploads the slip; the sandbox validator accepts it.
          await gateway.pay(payment_id);
          const delivery = await gateway.receiver.next('payment.completed', payment_id);
          const action = await service.getWebhookActionAndData({
            provider: 'mpay-promptpay_mpay',
            payload: {
              data: delivery.event,
              rawData: delivery.raw,
              headers: delivery.headers as Record<string, string>,
            },
          });
          show('3. webhook payment.completed handed to the payment module', {
            webhook_id: delivery.headers['webhook-id'],
            action,
          });
          assert.deepEqual(action, {
            action: 'captured',
            data: { session_id: created.id, amount: '250.50' },
          });

          await processWebhookAction(service, action);
          const session = await service.retrievePaymentSession(created.id);
          const [payment] = await service.listPayments(
            { payment_session_id: created.id },
            { relations: ['captures', 'refunds'] },
          );
          const paid_collection = await service.retrievePaymentCollection(collection.id);
          show('4. after the webhook: session authorized, payment captured', {
            session: { id: session.id, status: session.status, authorized_at: session.authorized_at },
            payment: {
              id: payment?.id,
              amount: payment?.amount,
              captured_at: payment?.captured_at,
              captures: payment?.captures?.map((capture) => capture.amount),
              gateway_status: payment?.data?.['status'],
            },
            collection: {
              status: paid_collection.status,
              authorized_amount: paid_collection.authorized_amount,
              captured_amount: paid_collection.captured_amount,
            },
          });
          assert.equal(session.status, 'authorized');
          assert.ok(session.authorized_at);
          assert.ok(payment?.captured_at);
          assert.deepEqual(
            payment?.captures?.map((capture) => Number(capture.amount)),
            [250.5],
          );
          assert.equal(payment?.data?.['status'], 'completed');
          assert.equal(paid_collection.status, 'completed');
          assert.equal(Number(paid_collection.captured_amount), 250.5);

          // The same delivery again (the gateway delivers at least once) changes nothing.
          await processWebhookAction(service, action);
          const [again] = await service.listPayments({ payment_session_id: created.id }, { relations: ['captures'] });
          assert.equal(again?.captures?.length, 1);

          const refunded = await service.refundPayment({ payment_id: payment!.id, amount: 100 });
          const [after_refund] = await service.listPayments(
            { payment_session_id: created.id },
            { relations: ['refunds'] },
          );
          const refunds = after_refund?.data?.['refunds'] as Record<string, unknown>[];
          show('5. refund of 100.00 (POST /v1/payments/{id}/refunds)', {
            payment: {
              id: after_refund?.id,
              refunds: after_refund?.refunds?.map((refund) => refund.amount),
              gateway_refunds: refunds,
            },
            collection: { refunded_amount: (await service.retrievePaymentCollection(collection.id)).refunded_amount },
          });
          assert.equal(refunded.id, payment!.id);
          assert.deepEqual(
            after_refund?.refunds?.map((refund) => Number(refund.amount)),
            [100],
          );
          assert.equal(refunds.length, 1);
          assert.equal(refunds[0]!['amount'], 10_000);
          assert.match(String(refunds[0]!['claim_url']), /^https?:\/\//);
          assert.equal(after_refund?.data?.['id'], payment_id);

          // The buyer names a destination on the claim page and the merchant pays; the sandbox plays that to the end.
          const settled = await gateway.settleRefund(refunds[0]!['id'] as string);
          const upstream = await gateway.payment(payment_id);
          show('6. the gateway after the refund succeeded (sandbox)', {
            refund: { id: settled['id'], status: settled['status'], amount: settled['amount'] },
            gateway_payment: {
              id: upstream['id'],
              status: upstream['status'],
              amount: upstream['amount'],
              amount_refunded: upstream['amount_refunded'],
              refunded: upstream['refunded'],
            },
          });
          assert.equal(settled['status'], 'succeeded');
          assert.equal(upstream['amount_refunded'], 10_000);
          assert.equal(upstream['refunded'], false);
        },
      );
    },
  });
}
