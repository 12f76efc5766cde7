import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { browserTestsSkipped, freePort, launchChromium } from '../helpers/chromium.ts';
import { INTERNAL_TOKEN, startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { addUser, PASSWORD } from './helpers.ts';

const PNG_RECEIPT = Buffer.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 7, 7, 7,
]);

describe('merchant dashboard in headless Chromium', { skip: browserTestsSkipped() }, () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let browser: Browser;
  let receiver: Server;
  let receiver_url: string;
  const received: string[] = [];
  let base_url: string;

  before(async () => {
    const port = await freePort();
    base_url = `http://127.0.0.1:${port}`;
    t = await startTestApp({ env: { PUBLIC_BASE_URL: base_url } });
    await t.application.app.listen({ port, host: '127.0.0.1' });
    merchant = await t.createMerchant('Browser Shop');
    await addUser(t, merchant.id, 'owner@browser.example', 'owner');
    await addUser(t, merchant.id, 'viewer@browser.example', 'viewer');
    // Live PAY for a sell order, and live pending funds waiting for the receiver's confirmation.
    const funded = await t.admin('POST', `/admin/merchants/${merchant.id}/ledger-adjustments`, {
      amount_micro_pay: 500_000_000,
      direction: 'credit',
      reason: 'browser test',
    });
    assert.equal(funded.statusCode, 201, funded.body);
    const pending = await t.request({
      method: 'POST',
      url: '/internal/pending-funds',
      headers: { authorization: `Bearer ${INTERNAL_TOKEN}` },
      payload: {
        receiver_merchant_id: merchant.id,
        amount_minor: 7_000_000,
        payer_reference: 'payer-browser',
        receipt_base64: PNG_RECEIPT.toString('base64'),
        content_type: 'image/png',
      },
    });
    assert.equal(pending.statusCode, 201, pending.body);
    receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        received.push(body);
        response.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiver_url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => receiver?.close(resolve));
    await t?.close();
  });

  /** Sends every due webhook, event after event (one resource's events go out in order, one per pass). */
  async function deliverAll(): Promise<void> {
    const dispatcher = t.application.webhooks.dispatcher;
    while ((await dispatcher.pass()) > 0) await dispatcher.drain();
  }

  async function open(width: number): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
    const context = await browser.newContext({
      viewport: { width, height: 900 },
      locale: 'en-US',
      acceptDownloads: true,
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    // No third-party network access: anything not on this origin fails the test.
    await context.route(
      (url) => !url.href.startsWith(base_url) && !url.href.startsWith('data:'),
      (route) => {
        errors.push(`third-party request: ${route.request().url()}`);
        return route.abort();
      },
    );
    return { context, page, errors };
  }

  async function signIn(page: Page, email: string): Promise<void> {
    await page.goto(`${base_url}/dashboard/sign-in`);
    await page.fill('#email', email);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${base_url}/dashboard`), page.click('#sign-in')]);
  }

  it('sign in, simulate, redeliver, webhook endpoint, pending funds, sell order, settlement CSV, sign out', async () => {
    const { context, page, errors } = await open(1280);
    await signIn(page, 'owner@browser.example');
    assert.equal(await page.locator('#current-mode').textContent(), 'Live');

    // Sandbox view: a webhook endpoint, then rotate its secret.
    await Promise.all([page.waitForURL(`${base_url}/dashboard`), page.click('#mode-switch')]);
    assert.equal(await page.locator('#current-mode').textContent(), 'Sandbox');
    await page.goto(`${base_url}/dashboard/developers`);
    await page.fill('#endpoint-url', receiver_url);
    await page.click('#create-endpoint');
    await page.waitForSelector('#endpoint-secret');
    const secret = await page.locator('#endpoint-secret').textContent();
    assert.match(secret ?? '', /^whsec_/);
    await page.locator('.rotate-secret').first().click();
    await page.waitForSelector('#endpoint-secret');
    const rotated = await page.locator('#endpoint-secret').textContent();
    assert.match(rotated ?? '', /^whsec_/);
    assert.notEqual(rotated, secret);

    // Simulate a payment; it shows in the list; its detail shows the events and deliveries; redeliver one.
    await page.goto(`${base_url}/dashboard/payments`);
    await page.selectOption('#scenario', 'matched_then_completed');
    await page.fill('#sim-order', 'browser-order-1');
    await Promise.all([page.waitForURL(/\/dashboard\/payments\/sbx_/), page.click('#simulate')]);
    const payment_id = (await page.locator('#payment-id').textContent())!;
    await page.goto(`${base_url}/dashboard/payments`);
    const row = page.locator('#payments tbody tr', { hasText: 'browser-order-1' });
    assert.equal(await row.count(), 1);
    assert.equal(await row.locator('td').nth(3).textContent(), payment_id);
    await deliverAll();
    assert.ok(
      received.some((body) => body.includes(payment_id)),
      "the simulated payment's webhook arrived",
    );
    const delivered_before = received.length;
    await Promise.all([
      page.waitForURL(`${base_url}/dashboard/payments/${payment_id}`),
      row.locator('a').first().click(),
    ]);
    assert.match((await page.locator('#timeline').textContent()) ?? '', /Payment succeeded/);
    const redeliver = page.locator('button.redeliver').first();
    await redeliver.click();
    await page.waitForSelector('td[id^=redeliver-] span.status');
    assert.match(
      (await page.locator('td[id^=redeliver-] span.status').first().textContent()) ?? '',
      /Queued for redelivery/,
    );
    await deliverAll();
    assert.ok(received.length > delivered_before, 'the redelivery was sent');

    // A settlement batch from the settlement_cycle scenario, downloaded as CSV.
    await page.goto(`${base_url}/dashboard/payments`);
    await page.selectOption('#scenario', 'settlement_cycle');
    await page.fill('#sim-amount', '250.00');
    await Promise.all([page.waitForURL(/\/dashboard\/payments\/sbx_/), page.click('#simulate')]);
    await page.goto(`${base_url}/dashboard/settlements`);
    await Promise.all([
      page.waitForURL(/\/dashboard\/settlements\/[0-9a-f-]{36}$/),
      page.locator('#settlements tbody a').first().click(),
    ]);
    assert.match((await page.locator('#fee-arithmetic').textContent()) ?? '', /Gross 250\.00 THB − fee/);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-csv')]);
    const csv = readFileSync((await download.path())!, 'utf8');
    assert.match(csv, /^payment_id,order_id,currency,amount_minor,amount,fee_minor,fee,net_minor,net/);
    assert.match(csv, /,THB,25000,250\.00,/);

    // Live view: confirm the pending funds with a receipt upload, then create and cancel a sell order.
    await Promise.all([page.waitForURL(`${base_url}/dashboard`), page.click('#mode-switch')]);
    assert.equal(await page.locator('#current-mode').textContent(), 'Live');
    await page.goto(`${base_url}/dashboard/balance`);
    const pending_row = page.locator('#pending-funds tbody tr', { hasText: 'payer-browser' });
    await pending_row
      .locator('input[type=file]')
      .setInputFiles({ name: 'receipt.png', mimeType: 'image/png', buffer: PNG_RECEIPT });
    await Promise.all([page.waitForURL(/\/dashboard\/balance/), pending_row.locator('button.confirm-pending').click()]);
    assert.match(
      (await page.locator('#pending-funds tbody tr', { hasText: 'payer-browser' }).textContent()) ?? '',
      /Confirmed/,
    );

    await page.fill('#sell-amount', '10');
    await page.selectOption('#sell-currency', 'THB');
    await page.fill('#sell-fiat', '350.00');
    // Where the buyers pay this seller: its PromptPay number.
    await page.selectOption('#sell-rail', 'promptpay');
    await page.fill('#sell-promptpay_id', '0812345678');
    await Promise.all([page.waitForURL(/\/dashboard\/balance/), page.click('#create-sell')]);
    const sell_row = page.locator('#sell-order-table tbody tr').first();
    assert.match((await sell_row.textContent()) ?? '', /10\.00 PAY.*350\.00 THB.*PromptPay 0812345678.*Pending/s);
    await Promise.all([page.waitForURL(/\/dashboard\/balance/), sell_row.locator('button.cancel-sell').click()]);
    const order = await t.db
      .selectFrom('sell_orders')
      .select(['status', 'failure_reason'])
      .where('merchant_id', '=', merchant.id)
      .executeTakeFirstOrThrow();
    assert.equal(order.status, 'failed');
    assert.equal(order.failure_reason, 'cancelled_by_merchant');
    assert.doesNotMatch((await page.locator('#sell-order-table tbody tr').first().textContent()) ?? '', /Pending/);

    await Promise.all([page.waitForURL(`${base_url}/dashboard/sign-in`), page.click('#sign-out')]);
    await page.goto(`${base_url}/dashboard`);
    assert.equal(new URL(page.url()).pathname, '/dashboard/sign-in', 'signed out');
    assert.deepEqual(errors, []);
    await context.close();
  });

  it('a viewer cannot roll keys (403 page); a form post without the CSRF token is refused', async () => {
    const { context, page } = await open(1280);
    await signIn(page, 'viewer@browser.example');
    await page.goto(`${base_url}/dashboard/developers`);
    assert.equal(await page.locator('.roll-key').count(), 0, 'no roll button for a viewer');
    const key_id = (
      await t.db
        .selectFrom('api_keys')
        .select('id')
        .where('merchant_id', '=', merchant.id)
        .where('kind', '=', 'live')
        .executeTakeFirstOrThrow()
    ).id;
    // The viewer crafts the post by hand, with a valid CSRF token.
    const csrf = await page.locator('body').getAttribute('data-csrf');
    const response = await Promise.all([
      page.waitForResponse(`${base_url}/dashboard/api-keys/${key_id}/roll`),
      page.evaluate(
        ({ action, token }) => {
          const form = document.createElement('form');
          form.method = 'post';
          form.action = action;
          form.innerHTML = `<input name="_csrf" value="${token}"><input name="grace_hours" value="1">`;
          document.body.append(form);
          form.submit();
        },
        { action: `/dashboard/api-keys/${key_id}/roll`, token: csrf ?? '' },
      ),
    ]).then(([r]) => r);
    assert.equal(response.status(), 403);
    await page.waitForSelector('#error-message');
    assert.match((await page.locator('#error-message').textContent()) ?? '', /Your role \(viewer\) cannot do this/);

    const refused = await Promise.all([
      page.waitForResponse(`${base_url}/dashboard/mode`),
      page.evaluate(() => {
        const form = document.createElement('form');
        form.method = 'post';
        form.action = '/dashboard/mode';
        form.innerHTML = '<input name="mode" value="sandbox">';
        document.body.append(form);
        form.submit();
      }),
    ]).then(([r]) => r);
    assert.equal(refused.status(), 403);
    await page.waitForSelector('#error-message');
    assert.match((await page.locator('#error-message').textContent()) ?? '', /security token/);
    await context.close();
  });
});
