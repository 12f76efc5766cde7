import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { EVENT_WORDS, STATUS_WORDS } from '../../src/modules/dashboard/words.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { browserTestsSkipped, freePort, launchChromium } from '../helpers/chromium.ts';
import { completedPayments } from '../helpers/payments.ts';
import { assertAccessibleAt, dashboardTab, wordsShown } from './browser-checks.ts';
import { addUser, signIn } from './helpers.ts';

/** Words a Thai page must not show: the English names of statuses and events, and the API's own values. */
const ENGLISH_WORDS = [
  ...new Set(
    [...Object.entries(STATUS_WORDS), ...Object.entries(EVENT_WORDS)].flatMap(([value, [en, th]]) =>
      en === th ? [] : [value, en],
    ),
  ),
];

/**
 * The dashboard's refund pages (a payment with its refund form and refunds, the refunds list, a refund waiting for its
 * claim and one waiting for the merchant's slip) in both languages at 1366 px and 390 px, and the refund form used in
 * the browser. They sit beside every-page.test.ts, which is at its time limit.
 */
describe('dashboard refund pages in Chromium: both languages, 1366 px and 390 px, no axe violation', {
  skip: browserTestsSkipped(),
}, () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let browser: Browser;
  let base_url: string;
  let cookie: string;
  let fresh_payment = '';
  const pages: [string, string][] = [];

  before(async () => {
    const port = await freePort();
    base_url = `http://127.0.0.1:${port}`;
    t = await startTestApp({ env: { PUBLIC_BASE_URL: base_url } });
    await t.application.app.listen({ port, host: '127.0.0.1' });
    merchant = await t.createMerchant('ร้านคืนเงิน Refunds');
    await t.createSeller(thbSeller());
    await addUser(t, merchant.id, 'owner@refunds-browser.example', 'owner');
    cookie = (await signIn(t, 'owner@refunds-browser.example')).cookie;
    const [payment_id, fresh] = await completedPayments(t, merchant.live, [
      { order_id: 'refund-browser-1', amount: 150_000 },
      { order_id: 'refund-browser-2', amount: 50_000 },
    ]);
    fresh_payment = fresh!;
    const refund = async (body: object) =>
      (
        await t.request({
          method: 'POST',
          url: `/v1/payments/${payment_id}/refunds`,
          headers: { 'x-api-key': merchant.live, 'idempotency-key': crypto.randomUUID() },
          payload: body,
        })
      ).json().data;
    const claim = await refund({ amount: '500.00', reason: 'requested_by_customer' });
    const pending = await refund({
      amount: 20_000,
      reason: 'partial_delivery',
      destination: { rail: 'promptpay', promptpay_id: '0812345678' },
    });
    pages.push(
      ['payment', `/dashboard/payments/${payment_id}`],
      ['refunds', '/dashboard/refunds'],
      ['refunds-filtered', '/dashboard/refunds?status=pending'],
      ['refund-claim', `/dashboard/refunds/${claim.id}`],
      ['refund-pending', `/dashboard/refunds/${pending.id}`],
    );
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function check(page: Page, what: string, width: number, lang: string): Promise<void> {
    await assertAccessibleAt(page, what, width);
    if (lang === 'th')
      assert.deepEqual(await wordsShown(page, ENGLISH_WORDS), [], `${what} shows no English status words`);
  }

  for (const width of [390, 1366]) {
    for (const lang of ['en', 'th'] as const) {
      it(`${lang} at ${width} px`, async () => {
        const { context, page, errors } = await dashboardTab(browser, base_url, lang, width, cookie);
        for (const [what, path] of pages) {
          await page.goto(`${base_url}${path}`);
          assert.equal(await page.locator('html').getAttribute('lang'), lang);
          await check(page, `${what} (${lang}) at ${width}px`, width, lang);
        }
        if (width === 390 && lang === 'th') {
          // The refund form on a phone: what remains is filled in; the refund shows its claim link and QR.
          await page.goto(`${base_url}/dashboard/payments/${fresh_payment}`);
          assert.equal(await page.inputValue('#refund-amount'), '500.00');
          await page.selectOption('#refund-reason', 'duplicate');
          await Promise.all([
            page.waitForURL(/\/dashboard\/refunds\/[0-9a-f-]{36}\?notice=done$/),
            page.click('#create-refund'),
          ]);
          assert.match(await page.inputValue('#claim-url'), new RegExp(`^${base_url}/refunds/claim/[A-Za-z0-9]{32}$`));
          assert.ok(await page.locator('#claim-qr').isVisible());
          await check(page, 'new refund (th) at 390px', width, lang);
        }
        assert.deepEqual(errors, []);
        await context.close();
      });
    }
  }
});
