import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { STATUS_WORDS } from '../../src/modules/dashboard/words.ts';
import { scriptedValidator } from '../helpers/validator.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { browserTestsSkipped, freePort, launchChromium } from '../helpers/chromium.ts';
import { drainVerdicts, uploadProof } from '../helpers/payments.ts';
import { assertAccessibleAt, dashboardTab } from './browser-checks.ts';
import { addUser, signIn } from './helpers.ts';

/** MPAY_DASHBOARD_LINKS_SCREENSHOT=dir saves each page at each width in English (the docs' copies come from here). */
const SCREENSHOTS = process.env['MPAY_DASHBOARD_LINKS_SCREENSHOT'];

/** The dashboard's payment-link pages and a paid link's payment, in both languages at 1366 px and 390 px (axe). */
describe('dashboard payment-link pages in Chromium: both languages, 1366 px and 390 px, no axe violation', {
  skip: browserTestsSkipped(),
}, () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let browser: Browser;
  let base_url: string;
  let cookie: string;
  const pages: [string, string][] = [];

  before(async () => {
    const port = await freePort();
    base_url = `http://127.0.0.1:${port}`;
    // A verification provider's verdicts (the double checks like easyslip), so live payments complete.
    t = await startTestApp({ env: { PUBLIC_BASE_URL: base_url }, overrides: { validator: scriptedValidator() } });
    await t.application.app.listen({ port, host: '127.0.0.1' });
    merchant = await t.createMerchant('ร้านผ้าไหม Links');
    await t.createSeller(thbSeller(10_000_000));
    await addUser(t, merchant.id, 'owner@links-browser.example', 'owner');
    cookie = (await signIn(t, 'owner@links-browser.example')).cookie;
    const link = (
      await t.call('POST', '/v1/payment-links', merchant.live, {
        title: 'ผ้าไหม Silk scarf',
        description: 'Hand-woven in Surin',
        currency: 'THB',
        amount: '1450.00',
      })
    ).json().data;
    await t.call('POST', '/v1/payment-links', merchant.live, {
      title: 'Tip jar',
      currency: 'THB',
      amount_range: { min: '20', max: '2000' },
      reusable: true,
      max_payments: 100,
    });
    const use = await t.request({ method: 'POST', url: `/pay/${link.id}` });
    const payment_id = String(use.headers.location).split('/').pop()!;
    await uploadProof(t, merchant.live, payment_id);
    await drainVerdicts(t);
    pages.push(
      ['links', '/dashboard/links'],
      ['link', `/dashboard/links/${link.id}`],
      ['link-payment', `/dashboard/payments/${payment_id}`],
    );
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function check(page: Page, what: string, width: number, lang: string): Promise<void> {
    await assertAccessibleAt(page, what, width);
    if (lang === 'th') {
      const english = await page.evaluate(
        (words) =>
          [...document.querySelectorAll<HTMLElement>('[data-status]')]
            .map((element) => element.innerText.trim())
            .filter((text) => words.includes(text)),
        Object.values(STATUS_WORDS).map(([en]) => en),
      );
      assert.deepEqual(english, [], `${what} shows its statuses in Thai`);
    }
  }

  for (const width of [1366, 390]) {
    for (const lang of ['en', 'th'] as const) {
      it(`${lang} at ${width} px`, async () => {
        const { context, page, errors } = await dashboardTab(browser, base_url, lang, width, cookie);
        for (const [what, path] of pages) {
          await page.goto(`${base_url}${path}`);
          assert.equal(await page.locator('html').getAttribute('lang'), lang);
          await check(page, `${what} (${lang}) at ${width}px`, width, lang);
          if (SCREENSHOTS && lang === 'en')
            await page.screenshot({ path: `${SCREENSHOTS}/${what}-${width}.png`, fullPage: true });
        }
        if (width === 1366 && lang === 'en') {
          // The Copy button puts the link on the clipboard.
          await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base_url });
          await page.goto(`${base_url}${pages[1]![1]}`);
          await page.click('button[data-copy="link-url"]');
          await page.waitForFunction(() => document.querySelector('button[data-copy]')?.textContent === 'Copied');
          assert.match(await page.evaluate(() => navigator.clipboard.readText()), /\/pay\/plink_/);
        }
        assert.deepEqual(errors, []);
        await context.close();
      });
    }
  }
});
