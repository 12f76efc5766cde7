import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { EVENT_WORDS, STATUS_WORDS } from '../../src/modules/dashboard/words.ts';
import { browserTestsSkipped, freePort, launchChromium } from '../helpers/chromium.ts';
import { INTERNAL_TOKEN, startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { assertAccessibleAt, dashboardTab, wordsShown } from './browser-checks.ts';
import { addUser, PASSWORD, signIn as signInByHttp } from './helpers.ts';

/** Screenshots of a few visits (gitignored; docs/dashboard-*.png are copies of them). */
const ARTIFACTS = new URL('../../test-artifacts/dashboard-every-page/', import.meta.url).pathname;
const WIDTHS = [1366, 390] as const;
const SCREENSHOTS = new Set([
  'home-sandbox-th-1366',
  'home-th-1366',
  'payment-sandbox-th-390',
  'payment-sandbox-en-390',
  'team-th-1366',
  'team-en-1366',
  'developers-sandbox-en-1366',
  'developers-sandbox-th-1366',
  'payments-th-390',
]);
const LANGS = ['en', 'th'] as const;
const PNG_RECEIPT = Buffer.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 7, 7, 7,
]);

/** Words a Thai page must not show: the English names of statuses and events, and the API's own values. */
const ENGLISH_WORDS = [
  ...new Set(
    [...Object.entries(STATUS_WORDS), ...Object.entries(EVENT_WORDS)].flatMap(([value, [en, th]]) =>
      en === th ? [] : [value, en],
    ),
  ),
];

describe('every dashboard page in both languages at 1366 px and 390 px (Chromium + axe)', {
  skip: browserTestsSkipped(),
  concurrency: 2,
}, () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let browser: Browser;
  let base_url: string;
  const live_pages: [string, string][] = [];
  const sandbox_pages: [string, string][] = [];

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const port = await freePort();
    base_url = `http://127.0.0.1:${port}`;
    t = await startTestApp({ env: { PUBLIC_BASE_URL: base_url } });
    await t.application.app.listen({ port, host: '127.0.0.1' });
    merchant = await t.createMerchant('ร้านทดสอบ Every Page');
    await addUser(t, merchant.id, 'owner@every-page.example', 'owner');
    await addUser(t, merchant.id, 'finance@every-page.example', 'finance');
    const owner = await signInByHttp(t, 'owner@every-page.example');
    await t.admin('POST', `/admin/merchants/${merchant.id}/users`, {
      email: 'newcomer@every-page.example',
      role: 'viewer',
    });
    // Live: PAY, pending funds to confirm, a sell order, an API call in the request log.
    assert.equal(
      (
        await t.admin('POST', `/admin/merchants/${merchant.id}/ledger-adjustments`, {
          amount_micro_pay: 500_000_000,
          direction: 'credit',
          reason: 'every page',
        })
      ).statusCode,
      201,
    );
    const pending = await t.request({
      method: 'POST',
      url: '/internal/pending-funds',
      headers: { authorization: `Bearer ${INTERNAL_TOKEN}` },
      payload: {
        receiver_merchant_id: merchant.id,
        amount_minor: 7_000_000,
        payer_reference: 'payer-every-page',
        receipt_base64: PNG_RECEIPT.toString('base64'),
        content_type: 'image/png',
      },
    });
    assert.equal(pending.statusCode, 201, pending.body);
    assert.equal(
      (
        await owner.post('/dashboard/sell-orders', {
          _key: crypto.randomUUID(),
          amount_pay: '10',
          target_currency: 'THB',
          target_amount: '350.00',
          payout_rail: 'promptpay',
          promptpay_id: '0812345678',
        })
      ).statusCode,
      303,
    );
    const sell_order = await t.db
      .selectFrom('sell_orders')
      .select('id')
      .where('merchant_id', '=', merchant.id)
      .executeTakeFirstOrThrow();
    const dispute = await owner.post('/dashboard/disputes', {
      _key: crypto.randomUUID(),
      sell_order_id: sell_order.id,
      notes: 'every page',
    });
    assert.equal(dispute.statusCode, 303, dispute.body.slice(0, 300));
    const dispute_path = String(dispute.headers.location).split('?')[0]!;
    await t.call('GET', '/v1/payments?limit=1', merchant.live);
    // Sandbox: a completed, a settled and an expired payment, an endpoint and a test event.
    assert.equal((await owner.post('/dashboard/mode', { mode: 'sandbox' })).statusCode, 303);
    let payment_path = '';
    for (const [order_id, scenario] of [
      ['every-1', 'matched_then_completed'],
      ['every-2', 'settlement_cycle'],
      ['every-3', 'expired'],
    ] as const) {
      const simulated = await owner.post('/dashboard/payments/simulate', {
        scenario,
        amount: '1,250.00',
        currency: 'THB',
        order_id,
      });
      assert.equal(simulated.statusCode, 303, simulated.body.slice(0, 300));
      payment_path ||= String(simulated.headers.location).split('?')[0]!;
    }
    assert.equal(
      (await owner.post('/dashboard/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks', enabled_events: '*' }))
        .statusCode,
      201,
    );
    const settlement = await t.db
      .selectFrom('settlements')
      .select('id')
      .where('merchant_id', '=', merchant.id)
      .executeTakeFirstOrThrow();
    live_pages.push(
      ['home', '/dashboard'],
      ['payments', '/dashboard/payments'],
      ['balance', '/dashboard/balance'],
      ['dispute', dispute_path],
      ['settlements', '/dashboard/settlements'],
      ['developers', '/dashboard/developers'],
      ['team', '/dashboard/team'],
      ['settings', '/dashboard/settings'],
      ['account', '/dashboard/account'],
      ['not-found', '/dashboard/no-such-page'],
    );
    sandbox_pages.push(
      ['home-sandbox', '/dashboard'],
      ['payments-sandbox', '/dashboard/payments'],
      ['payment-sandbox', payment_path],
      ['settlements-sandbox', '/dashboard/settlements'],
      ['settlement-sandbox', `/dashboard/settlements/${settlement.id}`],
      ['developers-sandbox', '/dashboard/developers'],
    );
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function check(page: Page, name: string, width: number, lang: string): Promise<void> {
    await assertAccessibleAt(page, `${name} (${lang}) at ${width}px`, width);
    if (lang === 'th') {
      // Status badges and event names show their Thai word, never the English one or the API's value.
      const badges = await page.evaluate(
        (words) =>
          [...document.querySelectorAll<HTMLElement>('[data-status], span[title]')]
            .map((element) => element.innerText.trim())
            .filter((text) => text && words.includes(text)),
        ENGLISH_WORDS,
      );
      // Nor does any visible text outside ids, code and inputs.
      const english = [...badges, ...(await wordsShown(page, ENGLISH_WORDS))];
      assert.deepEqual(english, [], `${name} at ${width}px shows English status words on a Thai page`);
    }
    if (SCREENSHOTS.has(`${name}-${lang}-${width}`))
      await page.screenshot({ path: `${ARTIFACTS}${name}-${lang}-${width}.png`, fullPage: true });
  }

  for (const width of WIDTHS) {
    for (const lang of LANGS) {
      // each walks every page with axe: about a minute on a quiet 2-core machine, two minutes and more beside the other
      // shard of a CI run, so it gets five instead of the runner's default two
      it(`${lang} at ${width} px: sign-in, every live page, every sandbox page`, { timeout: 300_000 }, async () => {
        const { context, page, errors } = await dashboardTab(browser, base_url, lang, width);
        await page.goto(`${base_url}/dashboard/sign-in`);
        assert.equal(await page.locator('html').getAttribute('lang'), lang);
        await check(page, 'sign-in', width, lang);
        await page.fill('#email', 'owner@every-page.example');
        await page.fill('#password', PASSWORD);
        await Promise.all([page.waitForURL(`${base_url}/dashboard`), page.click('#sign-in')]);
        for (const [name, path] of live_pages) {
          await page.goto(`${base_url}${path}`);
          if (name === 'home')
            await page.waitForFunction(() => document.querySelectorAll('canvas[data-drawn]').length === 3);
          await check(page, name, width, lang);
        }
        await Promise.all([page.waitForURL(`${base_url}/dashboard`), page.click('#mode-switch')]);
        for (const [name, path] of sandbox_pages) {
          await page.goto(`${base_url}${path}`);
          await check(page, name, width, lang);
        }
        assert.deepEqual(errors, []);
        await context.close();
      });
    }
  }
});
