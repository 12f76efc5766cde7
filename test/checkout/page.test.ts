import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { processProofVerdicts } from '../../src/modules/payments/verdicts.ts';
import { nullValidator } from '../../src/modules/validators/null-validator.ts';
import { confirmAwaitingLegs } from '../helpers/payments.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { decodeQr, multipart, uniquePng } from '../helpers/files.ts';

describe('hosted checkout page (server-rendered)', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  const create = async (body: Record<string, unknown> = {}, key = merchant.live) => {
    const response = await t.call('POST', '/v1/trades', key, {
      order_id: `o-${Math.random()}`,
      amount: '100.00',
      currency: 'THB',
      return_url: 'https://shop.example/return?cart=7',
      ...body,
    });
    assert.equal(response.statusCode, 201, response.body);
    return response.json().data as { id: string; checkout_url: string };
  };
  const page = (id: string, headers: Record<string, string> = {}, query = '') =>
    t.request({ method: 'GET', url: `/checkout/${id}${query}`, headers });
  const upload = (id: string, bytes: Buffer, type = 'image/png') =>
    t.request({ method: 'POST', url: `/checkout/${id}/proof`, ...multipart('proof', bytes, 'slip.png', type) });
  const status = async (id: string) =>
    (await t.call('GET', `/v1/payments/${id}`, id.startsWith('sbx_') ? merchant.sandbox : merchant.live)).json().data
      .status;

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Shop');
    await t.createSeller(thbSeller(10_000_000, '35.00', '0812345678'));
  });
  after(() => t.close());

  it('shows amount, countdown and the PromptPay QR of each leg (same view-model as the API), and marks the payment opened', async () => {
    const payment = await create();
    assert.equal(payment.checkout_url, `http://gateway.test/checkout/${payment.id}`);
    const response = await page(payment.id, { 'accept-language': 'en-US,en;q=0.9' });
    assert.equal(response.statusCode, 200);
    assert.match(response.headers['content-type'] as string, /^text\/html; charset=utf-8/);
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.match(response.headers['content-security-policy'] as string, /script-src 'nonce-/);
    const html = response.body;
    assert.match(html, /<html lang="en">/);
    assert.match(html, /name="viewport" content="width=device-width, initial-scale=1"/);
    assert.match(html, /฿100\.00 THB/);
    assert.match(html, /id="countdown"[^>]*>15:00</);
    assert.match(html, /Time left to pay/);
    const view = (await t.call('GET', `/v1/payments/${payment.id}/checkout`, merchant.live)).json().data;
    const qr = /<img class="qr" data-leg="1" src="data:image\/png;base64,([^"]+)"/.exec(html);
    assert.ok(qr, 'a QR image');
    assert.equal(decodeQr(Buffer.from(qr[1]!, 'base64')), view.legs[0].payee.qr_payload);
    assert.match(html, /0812345678/);
    assert.match(
      html,
      /<form id="proof-form" method="post" action="\/checkout\/[^"]+\/proof\?lang=en" enctype="multipart\/form-data">/,
    );
    assert.equal(await status(payment.id), 'payment_pending');
  });

  it('speaks Thai by ?lang=th, by Accept-Language, and by default for THB; English on request', async () => {
    const payment = await create();
    assert.match((await page(payment.id, {}, '?lang=th')).body, /<html lang="th">[\s\S]*ยอดที่ต้องชำระ[\s\S]*อัปโหลดสลิป/);
    assert.match((await page(payment.id, { 'accept-language': 'th-TH,th;q=0.9' })).body, /ยอดที่ต้องชำระ/);
    assert.match((await page(payment.id)).body, /<html lang="th">/);
    assert.match((await page(payment.id, { 'accept-language': 'th' }, '?lang=en')).body, /Amount due/);
  });

  it("takes the buyer's proof (public, payment-scoped), then shows confirming; a second upload or a bad file is refused on the page", async () => {
    const payment = await create();
    await page(payment.id);
    const bad = await upload(payment.id, Buffer.from('not an image at all'), 'image/png');
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /role="alert"/);
    assert.equal(await status(payment.id), 'payment_pending');
    const empty = await t.request({ method: 'POST', url: `/checkout/${payment.id}/proof`, payload: { x: 1 } });
    assert.equal(empty.statusCode, 400);
    const ok = await upload(payment.id, uniquePng());
    assert.equal(ok.statusCode, 303);
    assert.equal(ok.headers['location'], `/checkout/${payment.id}`);
    assert.equal(await status(payment.id), 'confirming');
    const again = await upload(payment.id, uniquePng());
    assert.equal(again.statusCode, 409);
    assert.match(again.body, /Checking your payment|กำลังตรวจสอบ/);
    const shown = await page(payment.id, { 'accept-language': 'en' });
    assert.match(shown.body, /Checking your payment/);
    assert.doesNotMatch(shown.body, /<form/);
    const polled = await t.request({ method: 'GET', url: `/checkout/${payment.id}/status` });
    assert.equal(polled.json().data.status, 'confirming');
    assert.equal(
      polled.json().data.return_redirect_url,
      `https://shop.example/return?cart=7&payment_id=${payment.id}&status=confirming`,
    );

    // null_validator checks nothing: the live leg waits for its seller, and the buyer is told so in both languages.
    await processProofVerdicts({ ...t.application.payments, validator: nullValidator });
    const waiting = await page(payment.id, { 'accept-language': 'en' });
    assert.match(waiting.body, /Waiting for the seller&#39;s confirmation|Waiting for the seller's confirmation/);
    assert.match(waiting.body, /does not expire meanwhile/);
    const waiting_th = await page(payment.id, { 'accept-language': 'th' });
    assert.match(waiting_th.body, /รอผู้ขายยืนยันการรับเงิน/);
    assert.equal(await confirmAwaitingLegs(t, [payment.id]), 1);
    const done = await page(payment.id, { 'accept-language': 'en' });
    assert.match(done.body, /Payment received/);
    assert.ok(
      done.body.includes(
        `location.href="https://shop.example/return?cart=7&payment_id=${payment.id}&status=completed"`,
      ),
    );
    assert.equal((await upload(payment.id, uniquePng())).statusCode, 409);
  });

  it('shows a clear page for expired, cancelled, failed and unknown payments', async () => {
    const expiring = await create({ expires_in_seconds: 60 });
    t.clock.advance(61_000);
    const expired = await page(expiring.id, { 'accept-language': 'en' });
    assert.equal(expired.statusCode, 200);
    assert.match(expired.body, /This payment has expired/);
    assert.match(expired.body, /status=expired/);
    assert.equal(await status(expiring.id), 'expired', 'lazily expired by the page');
    assert.equal((await upload(expiring.id, uniquePng())).statusCode, 409);

    const cancelled = await create();
    await t.db
      .updateTable('payments')
      .set({ status: 'cancelled', cancelled_at: t.clock.now() })
      .where('id', '=', cancelled.id)
      .execute();
    assert.match((await page(cancelled.id, { 'accept-language': 'en' })).body, /This payment was cancelled/);

    const failed = (
      await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, { scenario: 'matched_then_failed' })
    ).json().data.payment;
    const failed_page = await page(failed.id, { 'accept-language': 'en' });
    assert.match(failed_page.body, /Payment not confirmed/);
    assert.match(failed_page.body, /sandbox_simulated_failure/);
    assert.match(failed_page.body, /Sandbox: no real money moves/);

    for (const id of ['00000000-0000-4000-8000-000000000000', 'sbx_00000000-0000-4000-8000-000000000000', 'nonsense']) {
      const missing = await page(id, { 'accept-language': 'en' });
      assert.equal(missing.statusCode, 404);
      assert.match(missing.body, /Payment not found/);
    }
    assert.equal((await upload('00000000-0000-4000-8000-000000000000', uniquePng())).statusCode, 404);
    assert.equal(
      (await t.request({ method: 'GET', url: '/checkout/00000000-0000-4000-8000-000000000000/status' })).statusCode,
      404,
    );
  });

  it('shows PayID and bank details for non-PromptPay legs, and escapes merchant text', async () => {
    const aud = await create(
      { currency: 'AUD', amount: 2500, payment_method: 'payid', order_id: '<script>alert(1)</script>' },
      merchant.sandbox,
    );
    const html = (await page(aud.id, { 'accept-language': 'en' })).body;
    assert.match(html, /PayID<\/dt><dd>seller-a@sandbox\.example/);
    assert.match(html, /25\.00 AUD/);
    assert.ok(!html.includes('<script>alert(1)</script>'));
    assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
    const bank = await create({ payment_method: 'bank_transfer' }, merchant.sandbox);
    const bank_html = (await page(bank.id, { 'accept-language': 'en' })).body;
    assert.match(bank_html, /Account number<\/dt><dd>1234567890/);
    assert.match(bank_html, /Bank<\/dt><dd>[^<]+</);
    assert.doesNotMatch(bank_html, /class="qr"/);
  });
});
