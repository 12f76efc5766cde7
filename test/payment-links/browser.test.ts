import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { scriptedValidator } from '../helpers/validator.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { browserTestsSkipped, freePort, launchChromium } from '../helpers/chromium.ts';
import { decodeQr } from '../helpers/files.ts';
import { drainVerdicts, uploadProof } from '../helpers/payments.ts';

/** MPAY_LINK_SCREENSHOT=path saves the link page as a phone shows it; MPAY_RECEIPT_SCREENSHOT=path the paid receipt. */
const LINK_SCREENSHOT = process.env['MPAY_LINK_SCREENSHOT'];
const RECEIPT_SCREENSHOT = process.env['MPAY_RECEIPT_SCREENSHOT'];
/** MPAY_REFUNDED_RECEIPT_SCREENSHOT=path saves a receipt after a partial refund. */
const REFUNDED_RECEIPT_SCREENSHOT = process.env['MPAY_REFUNDED_RECEIPT_SCREENSHOT'];

async function accessible(page: Page, what: string): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  assert.deepEqual(
    results.violations.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target).join(', ')}`),
    [],
    `${what} has no accessibility violation`,
  );
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 391, `${what} does not scroll sideways on a phone (${width}px)`);
}

describe('the payment link page and the receipt on a phone, in headless Chromium', {
  skip: browserTestsSkipped(),
}, () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let browser: Browser;

  before(async () => {
    const port = await freePort();
    // A verification provider's verdicts (the double checks like easyslip), so live payments complete.
    t = await startTestApp({
      env: { PUBLIC_BASE_URL: `http://127.0.0.1:${port}` },
      overrides: { validator: scriptedValidator() },
    });
    await t.application.app.listen({ port, host: '127.0.0.1' });
    merchant = await t.createMerchant('ร้านผ้าไหม Baan Silk');
    await t.createSeller(thbSeller(10_000_000, '35.00', '0812345678'));
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('a payer types an amount on the phone, continues to the checkout; after paying, the receipt shows it', async () => {
    const created = await t.call('POST', '/v1/payment-links', merchant.live, {
      title: 'ผ้าไหมมัดหมี่ (สั่งตัด)',
      description: 'Pay the amount we agreed in chat.\nจ่ายตามยอดที่ตกลงกันในแชท',
      currency: 'THB',
      amount_range: { min: '100.00', max: '5000.00' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const link = created.json().data;
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      locale: 'th-TH',
    });
    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    tab.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    await tab.goto(link.url);
    assert.equal(await tab.getAttribute('html', 'lang'), 'th');
    assert.match((await tab.locator('h1.title').textContent()) ?? '', /ผ้าไหมมัดหมี่/);
    assert.equal(decodeQr(await tab.locator('#share-qr').screenshot()), link.url, "the QR shares the link's URL");
    await accessible(tab, 'the link page (Thai)');
    if (LINK_SCREENSHOT) {
      // in English: the screenshot machines may have no Thai font
      await tab.goto(`${link.url}?lang=en`);
      await tab.screenshot({ path: LINK_SCREENSHOT, fullPage: true });
      await tab.goto(link.url);
    }

    // A wrong amount comes back with the message and the typed value.
    await tab.fill('#amount-input', '20');
    await Promise.all([tab.waitForLoadState('load'), tab.click('#continue')]);
    assert.match((await tab.locator('[role=alert]').textContent()) ?? '', /100\.00/);
    assert.equal(await tab.inputValue('#amount-input'), '20');
    await accessible(tab, 'the link page with an error');

    await tab.fill('#amount-input', '1250.50');
    await Promise.all([tab.waitForURL(/\/checkout\//), tab.click('#continue')]);
    assert.equal(await tab.locator('#amount').textContent(), '฿1250.50 THB');
    const payment_id = new URL(tab.url()).pathname.split('/').pop()!;
    // The checkout reloads itself while it waits for the money: leave it, so its reload cannot race the receipt's load.
    await tab.goto('about:blank');
    await uploadProof(t, merchant.live, payment_id);
    await drainVerdicts(t);
    const payment = (await t.call('GET', `/v1/payments/${payment_id}`, merchant.live)).json().data;
    assert.equal(payment.status, 'completed');
    assert.equal(payment.payment_link_id, link.id);

    await tab.goto(payment.receipt_url);
    assert.equal(await tab.locator('#receipt-number').textContent(), '000001');
    assert.match((await tab.locator('#received').textContent()) ?? '', /1250\.50/);
    await accessible(tab, 'the receipt (Thai)');
    await tab.locator('a.lang').click();
    assert.equal(await tab.getAttribute('html', 'lang'), 'en');
    await accessible(tab, 'the receipt (English)');
    if (RECEIPT_SCREENSHOT) await tab.screenshot({ path: RECEIPT_SCREENSHOT, fullPage: true });

    // The single-use link is used up now: the page says so (410).
    const gone = await tab.goto(link.url);
    assert.equal(gone?.status(), 410);
    await accessible(tab, 'the used-up link page');
    // the refused amount (400) and the used-up link (410) are the server's answers, not page errors
    assert.deepEqual(
      errors.filter((error) => !/responded with a status of 4(00|10)/.test(error)),
      [],
    );
    await context.close();
  });

  it('a receipt after a partial refund shows the refund and what was kept, on a phone, without accessibility violations', async () => {
    const created = await t.call('POST', '/v1/trades', merchant.sandbox, {
      order_id: 'order-2001',
      amount: '1250.00',
      currency: 'THB',
      return_url: 'https://shop.example/return',
    });
    const payment_id = created.json().data.id;
    await uploadProof(t, merchant.sandbox, payment_id);
    await drainVerdicts(t);
    const refund = await t.call(
      'POST',
      `/v1/payments/${payment_id}/refunds`,
      merchant.sandbox,
      { amount: '250.00', reason: 'partial_delivery' },
      { 'idempotency-key': crypto.randomUUID() },
    );
    assert.equal(refund.statusCode, 201, refund.body);
    await t.call('POST', `/v1/sandbox/refunds/${refund.json().data.id}/simulate`, merchant.sandbox, {
      outcome: 'succeeded',
    });
    const payment = (await t.call('GET', `/v1/payments/${payment_id}`, merchant.sandbox)).json().data;
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      locale: 'en-US',
    });
    const tab = await context.newPage();
    await tab.goto(payment.receipt_url);
    assert.match((await tab.locator('#receipt-status').textContent()) ?? '', /Partly refunded/);
    assert.match((await tab.locator('#net').textContent()) ?? '', /1000\.00/);
    await accessible(tab, 'the receipt after a partial refund');
    if (REFUNDED_RECEIPT_SCREENSHOT) await tab.screenshot({ path: REFUNDED_RECEIPT_SCREENSHOT, fullPage: true });
    await tab.locator('#refunds a').first().click();
    assert.match((await tab.locator('h1').textContent()) ?? '', /Refund receipt/);
    await accessible(tab, "the refund's own receipt");
    await context.close();
  });
});
