import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { browserTestsSkipped, freePort, launchChromium } from '../helpers/chromium.ts';
import { completedPayments } from '../helpers/payments.ts';
import { newSlip } from '../helpers/slips.ts';

/** MPAY_REFUND_SCREENSHOTS=dir saves the claim page at each step (docs/refund-claim-*.png are made this way). */
const SCREENSHOTS = process.env['MPAY_REFUND_SCREENSHOTS'];

describe('refund claim page in headless Chromium (390 px, no JavaScript)', { skip: browserTestsSkipped() }, () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let browser: Browser;

  before(async () => {
    const port = await freePort();
    t = await startTestApp({ env: { PUBLIC_BASE_URL: `http://127.0.0.1:${port}` } });
    await t.application.app.listen({ port, host: '127.0.0.1' });
    merchant = await t.createMerchant('Bangkok Books');
    await t.createSeller(thbSeller());
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function shot(tab: Page, name: string) {
    if (!SCREENSHOTS) return;
    mkdirSync(SCREENSHOTS, { recursive: true });
    await tab.screenshot({ path: `${SCREENSHOTS}/refund-claim-${name}.png`, fullPage: true });
  }

  it('the buyer names a PromptPay ID, then confirms the money arrived; the refund succeeds', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'book-2041', amount: 89_000 }]);
    const created = await t.request({
      method: 'POST',
      url: `/v1/payments/${payment_id}/refunds`,
      headers: { 'x-api-key': merchant.live, 'idempotency-key': randomUUID() },
      payload: { amount: '250.00', reason: 'partial_delivery' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const refund = created.json().data;

    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      locale: 'th-TH',
      javaScriptEnabled: false,
    });
    const tab = await context.newPage();
    await tab.goto(refund.next_action.claim_url);
    assert.equal(await tab.locator('html').getAttribute('lang'), 'th');
    assert.equal((await tab.locator('[data-amount]').textContent())?.trim(), '฿250.00 THB');
    assert.match((await tab.locator('h1').textContent()) ?? '', /Bangkok Books/);
    assert.ok(
      (await tab.evaluate(() => document.documentElement.scrollWidth)) <= 390,
      'no sideways scrolling on a phone',
    );

    // English, then the PromptPay form: a plain form post, no script.
    await tab.click('a.lang');
    assert.equal(await tab.locator('html').getAttribute('lang'), 'en');
    await shot(tab, '1-claim');
    const form = tab.locator('form[data-rail="promptpay"]');
    await form.locator('input[name="promptpay_id"]').fill('12');
    await form.locator('button').click();
    assert.match((await tab.locator('[role="alert"]').textContent()) ?? '', /PromptPay ID .*: must be a mobile number/);
    assert.equal(await tab.locator('html').getAttribute('lang'), 'en');
    await tab.locator('form[data-rail="promptpay"] input[name="promptpay_id"]').fill('081-234-5678');
    await tab.locator('form[data-rail="promptpay"] button').click();
    await tab.waitForSelector('[data-stage="waiting"]');
    assert.match((await tab.locator('[data-stage="waiting"]').textContent()) ?? '', /xxxxxx5678/);
    await shot(tab, '2-waiting');
    const pending = (await t.call('GET', `/v1/refunds/${refund.id}`, merchant.live)).json().data;
    assert.deepEqual([pending.status, pending.destination_details.masked], ['pending', 'xxxxxx5678']);

    // The merchant pays and shows its slip; nobody can check it, so the buyer is asked.
    const slip = await t.call('POST', `/v1/refunds/${refund.id}/proof`, merchant.live, {
      receipt_base64: newSlip().bytes.toString('base64'),
      content_type: 'image/png',
    });
    assert.equal(slip.json().data.proof.status, 'awaiting_buyer');
    await tab.reload();
    await tab.waitForSelector('[data-stage="confirm"]');
    await shot(tab, '3-confirm');
    await tab.locator('[data-stage="confirm"] button:not(.secondary)').click();
    await tab.waitForSelector('[data-stage="succeeded"]');
    await shot(tab, '4-succeeded');
    const done = (await t.call('GET', `/v1/refunds/${refund.id}`, merchant.live)).json().data;
    assert.equal(done.status, 'succeeded');
    const payment = (await t.call('GET', `/v1/payments/${payment_id}`, merchant.live)).json().data;
    assert.deepEqual([payment.amount_refunded, payment.refunded], [25_000, false]);
    await context.close();
  });
});
