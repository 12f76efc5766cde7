import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { processProofVerdicts } from '../../src/modules/payments/verdicts.ts';
import { nullValidator } from '../../src/modules/validators/null-validator.ts';
import { confirmAwaitingLegs } from '../helpers/payments.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { decodeQr, uniquePng } from '../helpers/files.ts';
import { browserTestsSkipped, freePort, launchChromium } from '../helpers/chromium.ts';
import { newSlip } from '../helpers/slips.ts';

/** MPAY_CHECKOUT_SCREENSHOT=path saves the page as the buyer first sees it (docs/checkout.png is made this way). */
const SCREENSHOT = process.env['MPAY_CHECKOUT_SCREENSHOT'];
/** MPAY_CHECKOUT_TWO_LEGS_SCREENSHOT=path saves a two-leg payment's page after its first slip. */
const TWO_LEGS_SCREENSHOT = process.env['MPAY_CHECKOUT_TWO_LEGS_SCREENSHOT'];

describe('hosted checkout in headless Chromium', { skip: browserTestsSkipped() }, () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let browser: Browser;
  let shop: Server;
  let shop_url: string;
  let base_url: string;

  before(async () => {
    const port = await freePort();
    base_url = `http://127.0.0.1:${port}`;
    t = await startTestApp({ env: { PUBLIC_BASE_URL: base_url } });
    await t.application.app.listen({ port, host: '127.0.0.1' });
    merchant = await t.createMerchant('Browser Shop');
    await t.createSeller(thbSeller(10_000_000, '35.00', '0812345678'));
    // The merchant's return page.
    shop = createServer((_request, response) =>
      response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Thanks for your order</h1>'),
    );
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
    shop_url = `http://127.0.0.1:${(shop.address() as AddressInfo).port}/return`;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => shop?.close(resolve));
    await t?.close();
  });

  it('amount and a QR that decodes to the payload, proof upload to confirming, then back to return_url on completion', async () => {
    const created = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: 'order-1001',
      amount: '1250.50',
      currency: 'THB',
      return_url: shop_url,
    });
    assert.equal(created.statusCode, 201, created.body);
    const payment = created.json().data;
    assert.equal(payment.checkout_url, `${base_url}/checkout/${payment.id}`);
    const view = (await t.call('GET', `/v1/payments/${payment.id}/checkout`, merchant.live)).json().data;

    // A phone-sized viewport: the page must read well on a phone.
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      locale: 'en-US',
    });
    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    tab.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    await tab.goto(payment.checkout_url);
    assert.equal(await tab.locator('#amount').textContent(), '฿1250.50 THB');
    await tab.waitForFunction(() => /^\d+:\d\d$/.test(document.getElementById('countdown')?.textContent ?? ''));
    const qr = tab.locator('img.qr').first();
    assert.ok(await qr.isVisible());
    assert.equal(
      decodeQr(await qr.screenshot()),
      view.legs[0].payee.qr_payload,
      "the QR the buyer sees decodes to the leg's PromptPay payload",
    );
    const width = await tab.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `no horizontal scrolling on a phone (${width}px)`);
    if (SCREENSHOT) {
      mkdirSync(new URL('.', `file://${SCREENSHOT}`).pathname, { recursive: true });
      await tab.screenshot({ path: SCREENSHOT, fullPage: true });
    }

    await tab.locator('#proof').setInputFiles({ name: 'slip.png', mimeType: 'image/png', buffer: uniquePng() });
    await tab.locator('#submit').click();
    await tab.locator('#status h1').waitFor();
    assert.equal(await tab.locator('#status h1').textContent(), 'Checking your payment');
    assert.equal((await t.call('GET', `/v1/payments/${payment.id}`, merchant.live)).json().data.status, 'confirming');

    // null_validator checks nothing: the page tells the buyer the payment waits for the seller; the seller's
    // confirmation (an operator's for it) completes it, and the page sends the buyer back to the shop.
    await processProofVerdicts({ ...t.application.payments, validator: nullValidator });
    await tab.locator('#status h1', { hasText: "Waiting for the seller's confirmation" }).waitFor({ timeout: 20_000 });
    assert.equal(await confirmAwaitingLegs(t, [payment.id]), 1);
    await tab.waitForURL((url) => url.href.startsWith(shop_url), { timeout: 20_000 });
    const back = new URL(tab.url());
    assert.equal(back.searchParams.get('payment_id'), payment.id);
    assert.equal(back.searchParams.get('status'), 'completed');
    assert.equal(await tab.locator('h1').textContent(), 'Thanks for your order');
    assert.deepEqual(errors, []);
    await context.close();
  });

  it('the Thai page and the expired page render in the browser', async () => {
    const created = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: 'order-1002',
      amount: 5000,
      currency: 'THB',
      return_url: shop_url,
      expires_in_seconds: 60,
    });
    const payment = created.json().data;
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'th-TH' });
    const tab = await context.newPage();
    await tab.goto(payment.checkout_url);
    assert.equal(await tab.getAttribute('html', 'lang'), 'th');
    assert.match((await tab.locator('body').textContent()) ?? '', /ยอดที่ต้องชำระ/);
    await tab.locator('a.lang').click();
    assert.equal(await tab.getAttribute('html', 'lang'), 'en');
    t.clock.advance(61_000);
    await tab.reload();
    assert.equal(await tab.locator('#status h1').textContent(), 'This payment has expired');
    assert.ok((await tab.locator('#return').getAttribute('href'))?.includes('status=expired'));
    await context.close();
  });

  it('a two-leg payment shows two payees and two uploads; each slip goes with its leg; completed when both are verified', async () => {
    // Better-priced offers than the suite's seller, together exactly the payment: two legs.
    await t.createSeller(thbSeller(100_000, '34.00', '0811111111'));
    await t.createSeller(thbSeller(50_000, '34.50', '0822222222'));
    const created = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: 'order-1003',
      amount: 150_000,
      currency: 'THB',
      return_url: shop_url,
    });
    const payment = created.json().data;
    assert.equal(payment.match_details.length, 2, created.body);
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      locale: 'en-US',
    });
    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    await tab.goto(payment.checkout_url);
    assert.equal(await tab.locator('section.leg').count(), 2);
    assert.equal(await tab.locator('img.qr').count(), 2);
    assert.equal(await tab.locator('input[type=file]').count(), 2, 'one upload per payee');
    assert.match((await tab.locator('section.leg[data-leg="2"]').textContent()) ?? '', /0822222222/);

    await tab.locator('#proof-1').setInputFiles({ name: 'slip-1.png', mimeType: 'image/png', buffer: newSlip().bytes });
    await tab.locator('#submit-1').click();
    await tab.locator('section.leg[data-leg="1"] .legstate').waitFor();
    assert.equal(await tab.locator('section.leg[data-leg="1"] .legstate').getAttribute('data-state'), 'checking');
    assert.equal(await tab.locator('input[type=file]').count(), 1, 'only the leg without a slip asks for one');
    assert.equal((await t.call('GET', `/v1/payments/${payment.id}`, merchant.live)).json().data.status, 'confirming');
    if (TWO_LEGS_SCREENSHOT) {
      mkdirSync(new URL('.', `file://${TWO_LEGS_SCREENSHOT}`).pathname, { recursive: true });
      await tab.screenshot({ path: TWO_LEGS_SCREENSHOT, fullPage: true });
    }
    await tab
      .locator('#proof-2')
      .setInputFiles({ name: 'slip-2.jpg', mimeType: 'image/jpeg', buffer: newSlip({ format: 'jpeg' }).bytes });
    await tab.locator('#submit-2').click();
    await tab.locator('#status h1').waitFor();
    assert.equal(await tab.locator('#status [data-state]').count(), 2);

    // The default validator (slip_qr on THB) reads each slip's QR, which proves nothing about amount or payee: each
    // leg waits for its seller, whose confirmation verifies it; both verified complete the payment.
    while ((await processProofVerdicts({ ...t.application.payments, validator: t.application.validator })) > 0);
    assert.equal(await confirmAwaitingLegs(t), 2);
    await tab.waitForURL((url) => url.href.startsWith(shop_url), { timeout: 20_000 });
    assert.equal(new URL(tab.url()).searchParams.get('status'), 'completed');
    assert.deepEqual(errors, []);
    await context.close();
  });
});
