import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { parse } from 'promptparse';
import generatePromptpayQr from 'promptpay-qr';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { decodeQr as readQr } from '../helpers/files.ts';

function decodeQr(png_bytes: Buffer): string {
  const data = readQr(png_bytes);
  assert.ok(data, 'the PNG holds a readable QR code');
  return data;
}

/** The EMVCo fields that matter, read independently of tag order. */
function promptpayFields(payload: string) {
  const parsed = parse(payload);
  assert.ok(parsed, `parses: ${payload}`);
  return {
    merchant: parsed.getTagValue('29', '01') ?? parsed.getTagValue('29', '02') ?? parsed.getTagValue('29', '03'),
    aid: parsed.getTagValue('29', '00'),
    currency: parsed.getTagValue('53'),
    amount: parsed.getTagValue('54') ?? null,
    country: parsed.getTagValue('58'),
  };
}

describe('checkout view-model, PromptPay QR, rates and reference data', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let thb_payment: { id: string };
  let aud_payment: { id: string };

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant();
    await t.createSeller(thbSeller(6_000, '35.00', '0812345678'));
    await t.createSeller(thbSeller(1_000_000, '35.50', '0898765432'));
    await t.createSeller({
      currency: 'AUD',
      payment_method: 'payid',
      display_name: 'Sydney',
      liquidity_minor: 1_000_000,
      rate: '1.50',
      payid: 'pay@seller.example',
    });
    thb_payment = (
      await t.call('POST', '/v1/trades', merchant.live, {
        order_id: 'thb-1',
        amount: '123.45',
        currency: 'THB',
        return_url: 'https://shop.example/done?cart=7',
      })
    ).json().data;
    aud_payment = (
      await t.call('POST', '/v1/trades', merchant.live, {
        order_id: 'aud-1',
        amount: '10.00',
        currency: 'AUD',
        return_url: 'https://shop.example/done',
      })
    ).json().data;
  });
  after(() => t.close());

  it("GET /v1/payments/{id}/checkout returns the view-model with each leg's payee and QR payload", async () => {
    const response = await t.call('GET', `/v1/payments/${thb_payment.id}/checkout`, merchant.live);
    assert.equal(response.statusCode, 200, response.body);
    const view = response.json().data;
    assert.equal(view.payment_id, thb_payment.id);
    assert.equal(view.amount, 12_345);
    assert.equal(view.amount_decimal, '123.45');
    assert.equal(view.currency, 'THB');
    assert.equal(view.status, 'matched');
    assert.equal(view.seconds_remaining, 900);
    assert.equal(view.checkout_url, `http://gateway.test/checkout/${thb_payment.id}`);
    assert.equal(
      view.return_redirect_url,
      `https://shop.example/done?cart=7&payment_id=${thb_payment.id}&status=matched`,
    );
    assert.equal(view.legs.length, 2);
    assert.deepEqual(
      view.legs.map((leg: { amount: number }) => leg.amount),
      [6_000, 6_345],
    );
    assert.equal(view.legs[0].payee.type, 'promptpay');
    assert.equal(view.legs[0].payee.promptpay_id, '0812345678');
    assert.equal(
      view.legs[0].payee.qr_image_url,
      `http://gateway.test/v1/payments/${thb_payment.id}/promptpay-qr?leg=1`,
    );
    assert.deepEqual(promptpayFields(view.legs[1].payee.qr_payload), {
      merchant: '0066898765432',
      aid: 'A000000677010111',
      currency: '764',
      amount: '63.45',
      country: 'TH',
    });

    const aud = (await t.call('GET', `/v1/payments/${aud_payment.id}/checkout`, merchant.live)).json().data;
    assert.deepEqual(aud.legs[0].payee, { type: 'payid', payid: 'pay@seller.example', display_name: 'Sydney' });

    const other = await t.createMerchant('Other');
    assert.equal((await t.call('GET', `/v1/payments/${thb_payment.id}/checkout`, other.live)).statusCode, 404);
    assert.equal((await t.call('GET', `/v1/payments/${thb_payment.id}/checkout`, undefined)).statusCode, 401);
    assert.equal((await t.call('GET', '/v1/payments/123/checkout', merchant.live)).statusCode, 400);
  });

  it("GET /v1/payments/{id}/promptpay-qr is a public PNG that decodes to the leg's EMVCo payload", async () => {
    const response = await t.request({ method: 'GET', url: `/v1/payments/${thb_payment.id}/promptpay-qr` });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'image/png');
    assert.equal(response.headers['cache-control'], 'public, max-age=300');
    const payload = decodeQr(response.rawPayload);
    const view = (await t.call('GET', `/v1/payments/${thb_payment.id}/checkout`, merchant.live)).json().data;
    assert.equal(payload, view.legs[0].payee.qr_payload);
    // cross-check against an independent generator (its tag order differs, its fields must not)
    assert.deepEqual(promptpayFields(payload), promptpayFields(generatePromptpayQr('0812345678', { amount: 60 })));

    const second = decodeQr(
      (await t.request({ method: 'GET', url: `/v1/payments/${thb_payment.id}/promptpay-qr?leg=2` })).rawPayload,
    );
    assert.equal(promptpayFields(second).amount, '63.45');
  });

  it('promptpay-qr: 400 NOT_TH for another currency, 400 for a bad id, 404 for an unknown payment or leg', async () => {
    const not_th = await t.request({ method: 'GET', url: `/v1/payments/${aud_payment.id}/promptpay-qr` });
    assert.equal(not_th.statusCode, 400);
    assert.equal(not_th.json().error.code, 'NOT_TH');
    assert.equal((await t.request({ method: 'GET', url: '/v1/payments/zzz/promptpay-qr' })).statusCode, 400);
    assert.equal(
      (await t.request({ method: 'GET', url: `/v1/payments/${randomUUID()}/promptpay-qr` })).statusCode,
      404,
    );
    assert.equal(
      (await t.request({ method: 'GET', url: `/v1/payments/${thb_payment.id}/promptpay-qr?leg=9` })).statusCode,
      404,
    );
  });

  it('POST /v1/promptpay/qr generates payloads for phone, national id and e-wallet ids, with or without an amount', async () => {
    const phone = await t.request({
      method: 'POST',
      url: '/v1/promptpay/qr',
      payload: { promptpay_id: '081-234-5678', amount: '100.5' },
    });
    assert.equal(phone.statusCode, 200, phone.body);
    assert.equal(phone.json().data.promptpay_id, '0812345678');
    assert.equal(phone.json().data.amount, '100.50');
    assert.deepEqual(
      promptpayFields(phone.json().data.payload),
      promptpayFields(generatePromptpayQr('0812345678', { amount: 100.5 })),
    );

    const national = await t.request({
      method: 'POST',
      url: '/v1/promptpay/qr',
      payload: { promptpay_id: '1234567890123', amount: 20 },
    });
    assert.equal(national.statusCode, 200);
    assert.deepEqual(
      promptpayFields(national.json().data.payload),
      promptpayFields(generatePromptpayQr('1234567890123', { amount: 20 })),
    );

    const static_qr = await t.request({
      method: 'POST',
      url: '/v1/promptpay/qr',
      payload: { promptpay_id: '123456789012345' },
    });
    assert.equal(static_qr.statusCode, 200);
    assert.equal(static_qr.json().data.amount, null);
    assert.equal(promptpayFields(static_qr.json().data.payload).amount, null);
  });

  it('POST /v1/promptpay/qr: 400 for a missing id, a malformed id and a negative amount', async () => {
    const cases = [
      { amount: 10 },
      { promptpay_id: '12345' },
      { promptpay_id: 'abcdefghij' },
      { promptpay_id: '0812345678', amount: -1 },
      { promptpay_id: '0812345678', amount: '1.234' },
    ];
    for (const payload of cases) {
      const response = await t.request({ method: 'POST', url: '/v1/promptpay/qr', payload });
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      assert.equal(response.json().error.code, 'VALIDATION_ERROR');
    }
  });

  it('GET /v1/reference/thai-banks lists the directory with a one-hour cache header', async () => {
    const response = await t.request({ method: 'GET', url: '/v1/reference/thai-banks' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['cache-control'], 'public, max-age=3600');
    const banks = response.json().data;
    assert.equal(banks.length, 24);
    assert.deepEqual(
      banks.find((bank: { code: string }) => bank.code === '004'),
      {
        code: '004',
        short_code: 'KBANK',
        swift_bic: 'KASITHBK',
        name_en: 'Kasikornbank',
        name_th: 'ธนาคารกสิกรไทย',
        promptpay_member: true,
      },
    );
  });

  it('GET /v1/rates reports the best rate and what is still available, per mode', async () => {
    const response = await t.call('GET', '/v1/rates?currency=THB&payment_method=promptpay', merchant.live);
    assert.equal(response.statusCode, 200, response.body);
    const rates = response.json().data;
    assert.equal(rates.best_rate, '35.50', 'the 35.00 seller is fully reserved by the THB payment');
    assert.equal(rates.available_liquidity_minor, 1_000_000 - 6_345);
    assert.equal(rates.available_liquidity_decimal, '9936.55');
    assert.equal(rates.offers, 1);

    const none = (await t.call('GET', '/v1/rates?currency=SGD&payment_method=bank_transfer', merchant.live)).json()
      .data;
    assert.equal(none.best_rate, null);
    assert.equal(none.available_liquidity_minor, 0);

    const sandbox = (await t.call('GET', '/v1/rates?currency=THB&payment_method=promptpay', merchant.sandbox)).json()
      .data;
    assert.equal(sandbox.best_rate, '35.00');
    assert.equal(sandbox.offers, 2);

    for (const query of [
      'currency=THB',
      'payment_method=promptpay',
      'currency=EUR&payment_method=promptpay',
      'currency=THB&payment_method=cash',
    ]) {
      const bad = await t.call('GET', `/v1/rates?${query}`, merchant.live);
      assert.equal(bad.statusCode, 400, query);
      assert.equal(bad.json().error.code, 'VALIDATION_ERROR');
    }
    assert.equal((await t.call('GET', '/v1/rates?currency=THB&payment_method=promptpay', undefined)).statusCode, 401);
  });

  it('POST /admin/sellers checks the payee detail against the method', async () => {
    const missing = await t.admin('POST', '/admin/sellers', {
      currency: 'THB',
      payment_method: 'promptpay',
      display_name: 'x',
      liquidity_minor: 100,
      rate: '35',
    });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().error.details[0].field, 'body.promptpay_id');
    const unsupported = await t.admin('POST', '/admin/sellers', {
      currency: 'USD',
      payment_method: 'payid',
      display_name: 'x',
      liquidity_minor: 100,
      rate: '1',
      payid: 'a@b.c',
    });
    assert.equal(unsupported.statusCode, 400);
    const zero_rate = await t.admin('POST', '/admin/sellers', {
      currency: 'THB',
      payment_method: 'promptpay',
      display_name: 'x',
      liquidity_minor: 100,
      rate: '0.00',
      promptpay_id: '0812345678',
    });
    assert.equal(zero_rate.statusCode, 400);
    const no_auth = await t.request({ method: 'POST', url: '/admin/sellers', payload: thbSeller() });
    assert.equal(no_auth.statusCode, 401);
  });
});
