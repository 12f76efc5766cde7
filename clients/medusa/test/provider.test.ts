/**
 * Each method of the provider, as built into dist/ (what the package ships), against the real gateway started by
 * the test (`node src/main.ts`, in-memory PGlite, a sandbox test key): payments created, paid with a slip, failed,
 * replaced and refunded for real, and webhooks as the gateway signed and delivered them.
 */
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { startGateway, type Gateway } from './helpers.ts';

type Package = typeof import('../src/index.ts');
type Provider = import('../src/index.ts').MpayPaymentProvider;
const require = createRequire(import.meta.url);
const mpay: Package = require('../dist/index.js');
const { MpayPromptPayService, MpayBankTransferService, MpayPayIdService, toMinorUnits, fromMinorUnits } = mpay;
const { BigNumber, MedusaError } = require('@medusajs/framework/utils') as typeof import('@medusajs/framework/utils');

const RETURN_URL = 'https://shop.example/checkout/return';

/** A Standard Webhooks signature made with the endpoint's secret, for events the sandbox cannot produce. */
function signed(secret: string, body: string, timestamp = Math.floor(Date.now() / 1000)) {
  const id = `msg_${randomUUID()}`;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return {
    data: JSON.parse(body),
    rawData: Buffer.from(body),
    headers: { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${signature}` },
  };
}

describe('@mpay/medusa provider methods against a running gateway', () => {
  let gateway: Gateway;
  let options: { baseUrl: string; apiKey: string; webhookSecret: string };
  let promptpay: InstanceType<typeof MpayPromptPayService>;

  before(async () => {
    gateway = await startGateway();
    options = { baseUrl: gateway.baseUrl, apiKey: gateway.testKey, webhookSecret: gateway.webhookSecret };
    promptpay = new MpayPromptPayService({}, { ...options, returnUrl: RETURN_URL });
  });
  after(async () => {
    await gateway?.stop();
  });

  const session = () => `payses_${randomUUID().replaceAll('-', '').slice(0, 26)}`;
  const initiate = (service: Provider = promptpay, amount: unknown = '250.50', currency_code = 'thb', id = session()) =>
    service.initiatePayment({
      amount: amount as never,
      currency_code,
      data: { session_id: id },
      context: { idempotency_key: id },
    });

  it('registers one service per rail under the identifiers Medusa composes into pp_<identifier>_<id>', () => {
    assert.deepEqual(
      mpay.default.services.map((service: any) => service.identifier),
      ['mpay-promptpay', 'mpay-payid', 'mpay-bank-transfer'],
    );
    assert.equal((mpay.default as any).module, 'payment');
  });

  it('validateOptions names every bad option and takes good ones', () => {
    assert.throws(
      () => MpayPromptPayService.validateOptions({ baseUrl: 'ftp://x', apiKey: 'sk_live_1', webhookSecret: 'secret' }),
      (error: Error) =>
        error instanceof MedusaError &&
        /baseUrl/.test(error.message) &&
        /apiKey/.test(error.message) &&
        /webhookSecret/.test(error.message),
    );
    assert.throws(() => MpayPromptPayService.validateOptions({ ...options, expiresInSeconds: 30 }), /expiresInSeconds/);
    assert.throws(() => MpayPromptPayService.validateOptions({ ...options, returnUrl: 'shop' }), /returnUrl/);
    assert.throws(() => new MpayPromptPayService({}, { ...options, apiKey: '' }), /apiKey/);
    MpayPromptPayService.validateOptions({ ...options, returnUrl: RETURN_URL, expiresInSeconds: 900 });
  });

  it('converts amounts exactly between major units and minor units, refusing what does not fit', () => {
    assert.equal(toMinorUnits(new BigNumber('250.5'), 'thb'), 25050);
    assert.equal(toMinorUnits({ value: '250.50000000000000000', precision: 20 } as never, 'THB'), 25050);
    assert.equal(toMinorUnits('0.29', 'AUD'), 29); // 0.29 * 100 is 28.999999999999996 in floating point
    assert.equal(toMinorUnits(1_234_567.89, 'USD'), 123_456_789);
    assert.equal(toMinorUnits('90071992547409.91', 'SGD'), 9_007_199_254_740_991);
    assert.throws(() => toMinorUnits(0.1 + 0.2, 'THB'), /more decimals than THB/);
    assert.throws(() => toMinorUnits('10.005', 'THB'), /more decimals/);
    assert.throws(() => toMinorUnits('0', 'THB'), /out of range/);
    assert.throws(() => toMinorUnits('-5', 'THB'), /positive decimal/);
    assert.throws(() => toMinorUnits('90071992547409.92', 'SGD'), /out of range/);
    assert.throws(() => toMinorUnits('10', 'EUR'), /mpay takes THB, AUD, USD, SGD/);
    assert.equal(fromMinorUnits(25050, 'THB'), '250.50');
    assert.equal(fromMinorUnits(7, 'THB'), '0.07');
    assert.equal(fromMinorUnits('9007199254740993', 'USD'), '90071992547409.93');
  });

  it("derives the UUID idempotency key the gateway requires from Medusa's key, the same each time", () => {
    const key = mpay.idempotencyUuid('ref_01KB1');
    assert.match(key, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(mpay.idempotencyUuid('ref_01KB1'), key);
    assert.notEqual(mpay.idempotencyUuid('ref_01KB2'), key);
  });

  it('initiatePayment creates the gateway payment with the session id as order_id and returns the checkout and the QR', async () => {
    const id = session();
    const result = await initiate(promptpay, new BigNumber('250.5'), 'thb', id);
    assert.equal(result.status, 'pending');
    const data = result.data as Record<string, any>;
    assert.equal(result.id, data['id']);
    assert.match(data['id'], /^sbx_/);
    assert.equal(data['session_id'], id);
    assert.equal(data['order_id'], id);
    assert.equal(data['status'], 'matched');
    assert.equal(data['amount'], 25050);
    assert.equal(data['amount_decimal'], '250.50');
    assert.equal(data['currency'], 'THB');
    assert.equal(data['payment_method'], 'promptpay');
    assert.equal(data['checkout_url'], `${gateway.baseUrl}/checkout/${data['id']}`);
    assert.equal(data['qr_image_url'], `${gateway.baseUrl}/v1/payments/${data['id']}/promptpay-qr`);
    assert.equal(data['legs'].length, 1);
    assert.equal(data['legs'][0].amount, 25050);
    assert.equal(data['legs'][0].payee.type, 'promptpay');
    assert.match(data['legs'][0].payee.qr_payload, /^000201/);
    const qr = await fetch(data['qr_image_url']);
    assert.equal(qr.headers.get('content-type'), 'image/png');

    const upstream = await gateway.payment(data['id']);
    assert.equal(upstream['order_id'], id);
    assert.equal(upstream['return_url'], RETURN_URL);
    assert.deepEqual(upstream['metadata'], { medusa_session_id: id });

    // The session id is the idempotency key: a retried initiate answers with the same payment.
    const again = await initiate(promptpay, '250.50', 'thb', id);
    assert.equal(again.id, result.id);
  });

  it('initiatePayment takes the return URL from the session data, and refuses without one', async () => {
    const bare = new MpayPromptPayService({}, options);
    const id = session();
    const result = await bare.initiatePayment({
      amount: 100,
      currency_code: 'thb',
      data: { session_id: id, return_url: 'https://shop.example/order/confirmed' },
      context: { idempotency_key: id },
    });
    assert.equal((await gateway.payment(result.id))['return_url'], 'https://shop.example/order/confirmed');
    await assert.rejects(initiate(bare), /needs a return URL/);
    await assert.rejects(initiate(promptpay, '1.001'), /more decimals/);
  });

  it('the PayID and bank-transfer services create payments on their own rails', async () => {
    const payid = await initiate(new MpayPayIdService({}, { ...options, returnUrl: RETURN_URL }), '42.10', 'aud');
    assert.equal((payid.data as any).payment_method, 'payid');
    assert.equal((payid.data as any).amount, 4210);
    assert.equal((payid.data as any).qr_image_url, null);
    assert.equal((payid.data as any).legs[0].payee.type, 'payid');
    const bank = await initiate(new MpayBankTransferService({}, { ...options, returnUrl: RETURN_URL }), 99, 'usd');
    assert.equal((bank.data as any).payment_method, 'bank_transfer');
    assert.equal((bank.data as any).currency, 'USD');
    assert.equal((bank.data as any).legs[0].payee.type, 'bank_transfer');
  });

  it('pending until paid, captured once the slip is verified: authorize, status, capture and retrieve follow the gateway', async () => {
    const { data } = await initiate();
    assert.equal((await promptpay.authorizePayment({ data })).status, 'pending');
    assert.equal((await promptpay.getPaymentStatus({ data })).status, 'pending');
    await assert.rejects(promptpay.capturePayment({ data }), /is matched: there is nothing to capture/);

    await gateway.pay(data!['id'] as string);
    await gateway.receiver.next('payment.completed', data!['id'] as string);
    const authorized = await promptpay.authorizePayment({ data });
    assert.equal(authorized.status, 'captured');
    assert.equal((authorized.data as any).status, 'completed');
    assert.equal((authorized.data as any).amount_received, 25050);
    assert.equal((await promptpay.getPaymentStatus({ data })).status, 'captured');
    const captured = await promptpay.capturePayment({ data });
    assert.equal((captured.data as any).status, 'completed');
    const retrieved = await promptpay.retrievePayment({ data });
    assert.equal((retrieved.data as any).status, 'completed');
    assert.equal((retrieved.data as any).session_id, data!['session_id']);
    await assert.rejects(promptpay.cancelPayment({ data }), /the buyer has paid, refund it instead/);
  });

  it('a refused slip fails the payment: error status, cancel leaves it, capture refused', async () => {
    const { data } = await initiate();
    await gateway.pay(data!['id'] as string, 'none');
    await gateway.receiver.next('payment.failed', data!['id'] as string);
    const status = await promptpay.getPaymentStatus({ data });
    assert.equal(status.status, 'error');
    assert.match(String((status.data as any).failure_reason), /receipt_/);
    assert.equal(((await promptpay.cancelPayment({ data })).data as any).status, 'failed');
    await assert.rejects(promptpay.capturePayment({ data }), /is failed/);
  });

  it('cancel of a matched payment says the gateway keeps it until it expires; delete leaves it to expire', async () => {
    const { data } = await initiate();
    await assert.rejects(promptpay.cancelPayment({ data }), /is matched and cannot be cancelled; it expires at/);
    const deleted = await promptpay.deletePayment({ data });
    assert.equal((deleted.data as any).id, data!['id']);
    assert.deepEqual(await promptpay.deletePayment({ data: {} }), { data: {} });
    assert.deepEqual(await promptpay.cancelPayment({ data: {} }), { data: {} });
  });

  it('updatePayment keeps the payment for the same amount and replaces it for another', async () => {
    const { data } = await initiate();
    const same = await promptpay.updatePayment({ data: data!, amount: '250.50', currency_code: 'thb' });
    assert.equal((same.data as any).id, data!['id']);
    assert.equal(same.status, 'pending');
    const changed = await promptpay.updatePayment({ data: data!, amount: 300, currency_code: 'thb' });
    const next = changed.data as Record<string, any>;
    assert.notEqual(next['id'], data!['id']);
    assert.equal(next['amount'], 30000);
    assert.equal(next['order_id'], `${data!['session_id']}~2`);
    assert.equal(next['revision'], 2);
    assert.deepEqual((await gateway.payment(next['id']))['metadata'], { medusa_session_id: data!['session_id'] });
    await assert.rejects(promptpay.updatePayment({ data: {}, amount: 1, currency_code: 'thb' }), /no gateway payment/);
  });

  it('getWebhookActionAndData verifies the delivered signature and maps completed to captured with the amount', async () => {
    const { data } = await initiate(promptpay, '250.50');
    const id = data!['id'] as string;
    await gateway.pay(id);
    const delivery = await gateway.receiver.next('payment.completed', id);
    const payload = {
      data: delivery.event,
      rawData: delivery.raw,
      headers: delivery.headers as Record<string, string>,
    };
    assert.deepEqual(await promptpay.getWebhookActionAndData(payload), {
      action: 'captured',
      data: { session_id: data!['session_id'], amount: '250.50' },
    });
    // Medusa's event bus may hand the raw body over as a serialised Buffer
    const serialised = JSON.parse(JSON.stringify({ rawData: delivery.raw })).rawData;
    assert.equal((await promptpay.getWebhookActionAndData({ ...payload, rawData: serialised })).action, 'captured');

    const matched = await gateway.receiver.next('payment.matched', id);
    assert.deepEqual(
      await promptpay.getWebhookActionAndData({
        data: matched.event,
        rawData: matched.raw,
        headers: matched.headers as Record<string, string>,
      }),
      { action: 'not_supported' },
    );

    const tampered = Buffer.from(delivery.raw.toString('utf8').replace('"completed"', '"completed" '));
    await assert.rejects(
      promptpay.getWebhookActionAndData({ ...payload, rawData: tampered }),
      (error: Error) => error instanceof MedusaError && /signature_mismatch/.test(error.message),
    );
    const other = new MpayPromptPayService(
      {},
      { ...options, webhookSecret: `whsec_${Buffer.from('x'.repeat(32)).toString('base64')}` },
    );
    await assert.rejects(other.getWebhookActionAndData(payload), /signature_mismatch/);
    await assert.rejects(
      promptpay.getWebhookActionAndData({
        ...payload,
        headers: { ...payload.headers, 'webhook-signature': undefined } as any,
      }),
      /signature_missing/,
    );
    await assert.rejects(promptpay.getWebhookActionAndData({ ...payload, rawData: undefined as any }), /raw body/);
  });

  it('maps a failed payment to failed, and expired and partly paid events (signed with the endpoint secret) as well', async () => {
    const { data } = await initiate();
    await gateway.pay(data!['id'] as string, 'none');
    const failed = await gateway.receiver.next('payment.failed', data!['id'] as string);
    assert.deepEqual(
      await promptpay.getWebhookActionAndData({
        data: failed.event,
        rawData: failed.raw,
        headers: failed.headers as Record<string, string>,
      }),
      { action: 'failed', data: { session_id: data!['session_id'], amount: '250.50' } },
    );

    const view = await gateway.payment(data!['id'] as string);
    const event = (type: string, payment: Record<string, unknown>) =>
      JSON.stringify({ id: `evt_${randomUUID()}`, type, event: type, data: payment });
    const expired = signed(gateway.webhookSecret, event('payment.expired', { ...view, status: 'expired' }));
    assert.deepEqual(await promptpay.getWebhookActionAndData(expired), {
      action: 'failed',
      data: { session_id: data!['session_id'], amount: '250.50' },
    });
    const partly = signed(
      gateway.webhookSecret,
      event('payment.partially_paid', { ...view, status: 'partially_paid', amount_received: 12_525 }),
    );
    assert.deepEqual(await promptpay.getWebhookActionAndData(partly), {
      action: 'captured',
      data: { session_id: data!['session_id'], amount: '125.25' },
    });
    // Without amount_received, the verified legs' amounts are what arrived.
    const legs = [
      { match_order: 1, allocated_fiat_amount: 16_000, proof: { status: 'verified' } },
      { match_order: 2, allocated_fiat_amount: 9_050, proof: { status: 'rejected' } },
    ];
    const by_legs = signed(
      gateway.webhookSecret,
      event('payment.partially_paid', {
        ...view,
        status: 'partially_paid',
        amount_received: undefined,
        match_details: legs,
      }),
    );
    assert.equal((await promptpay.getWebhookActionAndData(by_legs)).data?.amount, '160.00');
    // A payment that no Medusa session created is not the provider's
    const foreign = signed(gateway.webhookSecret, event('payment.completed', { ...view, metadata: null }));
    assert.deepEqual(await promptpay.getWebhookActionAndData(foreign), { action: 'not_supported' });
    // An old delivery replayed outside the 5-minute window is refused
    const stale = signed(gateway.webhookSecret, event('payment.expired', view), Math.floor(Date.now() / 1000) - 600);
    await assert.rejects(promptpay.getWebhookActionAndData(stale), /timestamp_out_of_tolerance/);
  });

  it('a partly paid payment is captured once, for what arrived; capturing the rest is refused', async () => {
    const { data } = await initiate(promptpay, '250.50');
    const view = await gateway.payment(data!['id'] as string);
    // The sandbox matches one synthetic seller, so a partly paid payment (two payees, one paid) is made up here.
    const partly = new MpayPromptPayService({}, { ...options, returnUrl: RETURN_URL });
    (partly as any).gateway.retrievePayment = async () => ({
      ...view,
      status: 'partially_paid',
      amount_received: 12_525,
    });
    assert.equal((await partly.authorizePayment({ data })).status, 'authorized');
    const first = await partly.capturePayment({ data });
    assert.equal((first.data as any).amount_received, 12_525);
    assert.equal((first.data as any).received_captured, true);
    await assert.rejects(partly.capturePayment({ data: first.data }), /only 125.25 THB arrived and it is captured/);
  });

  it('refundPayment creates a gateway refund for the amount and returns its claim link', async () => {
    const { data } = await initiate(promptpay, '250.50');
    await gateway.pay(data!['id'] as string);
    await gateway.receiver.next('payment.completed', data!['id'] as string);
    const paid = (await promptpay.retrievePayment({ data })).data!;
    const refunded = await promptpay.refundPayment({
      data: paid,
      amount: new BigNumber('100.25'),
      context: { idempotency_key: 'ref_medusa_1' },
    });
    const refunds = (refunded.data as any).refunds as Record<string, any>[];
    assert.equal(refunds.length, 1);
    assert.equal(refunds[0]!['amount'], 10_025);
    assert.equal(refunds[0]!['amount_decimal'], '100.25');
    assert.equal(refunds[0]!['status'], 'requires_action');
    assert.match(String(refunds[0]!['claim_url']), /^https?:\/\//);
    assert.equal((refunded.data as any).id, data!['id']);
    // Medusa's refund id is the idempotency key: a retry does not refund twice
    const again = await promptpay.refundPayment({
      data: paid,
      amount: new BigNumber('100.25'),
      context: { idempotency_key: 'ref_medusa_1' },
    });
    assert.equal((again.data as any).refunds[0].id, refunds[0]!['id']);
    await assert.rejects(
      promptpay.refundPayment({ data: refunded.data, amount: 200, context: { idempotency_key: 'ref_medusa_2' } }),
      /REFUND_EXCEEDS_PAYMENT/,
    );
  });
});
