import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { promptpayPayload } from '../../src/modules/reference/promptpay.ts';
import { readSlip } from '../../src/modules/validators/read-slip.ts';
import { slipQrValidator } from '../../src/modules/validators/slip-qr.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { multipart, uniquePng } from '../helpers/files.ts';
import { confirmAwaitingLegs, drainVerdicts } from '../helpers/payments.ts';
import { runMpay } from '../helpers/cli.ts';
import { newSlip, newSlipReference, slipImage } from '../helpers/slips.ts';

const require = createRequire(import.meta.url);

/** The same picture as WebP (lossless), through libwebp's own encoder. */
async function asWebp(png_bytes: Buffer): Promise<Buffer> {
  const png = PNG.sync.read(png_bytes);
  const encoder = await import('@jsquash/webp/encode.js');
  await encoder.init(
    await WebAssembly.compile(await readFile(require.resolve('@jsquash/webp/codec/enc/webp_enc.wasm'))),
  );
  const data = new Uint8ClampedArray(png.data.byteLength);
  data.set(png.data);
  return Buffer.from(
    await encoder.default({ data, width: png.width, height: png.height, colorSpace: 'srgb' }, { lossless: 1 }),
  );
}

describe('reading the slip-verification QR locally', () => {
  it('finds the bank and reference in PNG, JPEG and WebP slips, and the same reference in another photo of the slip', async () => {
    const reference = newSlipReference();
    const png = slipImage({ reference, sending_bank: '014' });
    for (const bytes of [
      png,
      slipImage({ reference, format: 'jpeg', variant: 2, sending_bank: '014' }),
      await asWebp(png),
    ]) {
      assert.deepEqual(await readSlip(bytes), { kind: 'slip', slip: { sending_bank: '014', reference } });
    }
  });

  it('tells no QR, a damaged QR, a QR that is not a slip QR and a file that is no image apart', async () => {
    const reference = newSlipReference();
    assert.deepEqual(await readSlip(slipImage({ reference, qr: 'none' })), { kind: 'no_qr' });
    assert.deepEqual(await readSlip(slipImage({ reference, qr: 'damaged', format: 'jpeg' })), { kind: 'no_qr' });
    const payment_qr = await QRCode.toBuffer(promptpayPayload('0812345678', 10_000), {
      type: 'png',
      margin: 2,
      width: 300,
    });
    assert.equal((await readSlip(payment_qr)).kind, 'other_qr');
    assert.deepEqual(await readSlip(Buffer.from('%PDF-1.4 receipt')), { kind: 'not_an_image' });
    // HEIC by its header, but no image inside: nothing to read, never a crash.
    const heic_header = Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from('ftypheic'), Buffer.alloc(16)]);
    assert.deepEqual(await readSlip(heic_header), { kind: 'not_an_image' });
  });

  it('mpay sandbox slip writes a slip the reader finds, the same reference again on request', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mpay-slip-'));
    const out = join(dir, 'slip.jpg');
    const written = await runMpay([
      'sandbox',
      'slip',
      '--out',
      out,
      '--format',
      'jpeg',
      '--reference',
      'REF0123456789',
      '--variant',
      '2',
    ]);
    assert.equal(written.code, 0, written.stderr);
    assert.match(written.stdout, /slip REF0123456789 written/);
    assert.deepEqual(await readSlip(await readFile(out)), {
      kind: 'slip',
      slip: { sending_bank: '004', reference: 'REF0123456789' },
    });
    assert.equal((await runMpay(['sandbox', 'slip', '--out', out, '--qr', 'broken'])).code, 2);
    await rm(dir, { recursive: true, force: true });
  });

  it('slip_qr verifies a slip QR and records that amount and payee were not checked; anything else fails with a reason', async () => {
    const { reference, bytes } = newSlip();
    const verdict = await slipQrValidator.validate({
      image: bytes,
      content_type: 'image/png',
      expected_amount_minor: 1,
    });
    assert.deepEqual(
      [verdict.outcome, verdict.reference, verdict.unverified_fields],
      ['verified', reference, ['amount', 'receiver']],
    );
    const reason = async (image: Buffer) =>
      (await slipQrValidator.validate({ image, content_type: 'image/png' })).reason;
    assert.equal(await reason(newSlip({ qr: 'none' }).bytes), 'slip_qr_missing');
    assert.equal(await reason(newSlip({ qr: 'damaged' }).bytes), 'slip_qr_missing');
    assert.equal(await reason(await QRCode.toBuffer('https://example.com', { type: 'png' })), 'slip_qr_invalid');
    assert.equal(await reason(Buffer.from('%PDF-1.4')), 'slip_not_an_image');
  });
});

describe('the default validator through the API (slip_qr on THB, null_validator elsewhere)', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let order = 0;

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Default validator');
    await t.createSeller(thbSeller(100_000_000, '35.00', '0812345678'));
    await t.createSeller({
      currency: 'AUD',
      payment_method: 'payid',
      display_name: 'AUD seller',
      liquidity_minor: 10_000_000,
      rate: '1.52',
      payid: 'pay@seller.example',
    });
  });
  after(() => t.close());

  async function pay(bytes: Buffer, currency = 'THB', key = merchant.live) {
    const created = await t.call('POST', '/v1/trades', key, {
      order_id: `default-${++order}`,
      amount: 10_000,
      currency,
      return_url: 'https://shop.example/r',
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().data.id;
    const { payload, headers } = multipart('proof', bytes);
    const upload = await t.request({
      method: 'POST',
      url: `/v1/payments/${id}/proof`,
      payload,
      headers: { ...headers, 'x-api-key': key },
    });
    return { id, upload };
  }
  const outcome = async (id: string, key = merchant.live) => {
    const data = (await t.call('GET', `/v1/payments/${id}`, key)).json().data;
    return [data.status, data.failure_reason];
  };

  it('a THB slip with a new slip QR waits for its seller, whose confirmation completes it; a random PNG, a damaged QR and a PromptPay payment QR fail with their reasons', async () => {
    const good = await pay(newSlip().bytes);
    const random = await pay(uniquePng());
    const damaged = await pay(newSlip({ qr: 'damaged' }).bytes);
    const not_a_slip = await pay(
      await QRCode.toBuffer(promptpayPayload('0812345678', 10_000), { type: 'png', width: 300 }),
    );
    for (const { upload } of [good, random, damaged, not_a_slip]) assert.equal(upload.statusCode, 200, upload.body);
    await drainVerdicts(t);
    assert.deepEqual(await outcome(good.id), ['confirming', null]);
    assert.equal(
      (await t.call('GET', `/v1/payments/${good.id}`, merchant.live)).json().data.match_details[0].proof.status,
      'awaiting_payee',
      'a slip QR read locally proves nothing about amount or payee',
    );
    assert.equal(await confirmAwaitingLegs(t, [good.id]), 1);
    assert.deepEqual(await outcome(good.id), ['completed', null]);
    assert.deepEqual(await outcome(random.id), ['failed', 'receipt_slip_qr_missing']);
    assert.deepEqual(await outcome(damaged.id), ['failed', 'receipt_slip_qr_missing']);
    assert.deepEqual(await outcome(not_a_slip.id), ['failed', 'receipt_slip_qr_invalid']);
    const slip = await t.db
      .selectFrom('slips')
      .selectAll()
      .where('owner', '=', `payment:${good.id}:leg:1`)
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      [slip.accepted, slip.validator_kind, slip.unverified_fields, slip.sending_bank],
      [true, 'slip_qr', ['amount', 'receiver'], '004'],
    );
    assert.match(slip.sha256, /^[0-9a-f]{64}$/);
  });

  it('a reused slip: the same file is 409 PROOF_DUPLICATE at upload; another photo of it in the same mode fails receipt_duplicate_slip', async () => {
    const { reference, bytes } = newSlip();
    const first = await pay(bytes);
    await drainVerdicts(t);
    assert.deepEqual(await outcome(first.id), ['confirming', null], 'it waits for its seller, its reference claimed');
    const same_file = await pay(bytes);
    assert.deepEqual([same_file.upload.statusCode, same_file.upload.json().error.code], [409, 'PROOF_DUPLICATE']);
    const photo = await pay(newSlip({ reference, format: 'jpeg', variant: 1 }).bytes);
    await drainVerdicts(t);
    assert.deepEqual(await outcome(photo.id), ['failed', 'receipt_duplicate_slip']);
  });

  it('identity is per mode: a sandbox slip that claims a live reference first does not make the genuine live slip a duplicate; the same reference twice in one mode does', async () => {
    const { reference } = newSlip();
    const sandbox_first = await pay(newSlip({ reference, variant: 2 }).bytes, 'THB', merchant.sandbox);
    await drainVerdicts(t);
    assert.deepEqual(await outcome(sandbox_first.id, merchant.sandbox), ['completed', null]);
    const sandbox_again = await pay(newSlip({ reference, variant: 3 }).bytes, 'THB', merchant.sandbox);
    await drainVerdicts(t);
    assert.deepEqual(await outcome(sandbox_again.id, merchant.sandbox), ['failed', 'receipt_duplicate_slip']);

    const live = await pay(newSlip({ reference, variant: 4 }).bytes);
    await drainVerdicts(t);
    assert.deepEqual(await outcome(live.id), ['confirming', null]);
    assert.equal(
      (await t.call('GET', `/v1/payments/${live.id}`, merchant.live)).json().data.match_details[0].proof.status,
      'awaiting_payee',
    );
    const live_again = await pay(newSlip({ reference, format: 'jpeg', variant: 5 }).bytes);
    await drainVerdicts(t);
    assert.deepEqual(await outcome(live_again.id), ['failed', 'receipt_duplicate_slip']);
    assert.equal(await confirmAwaitingLegs(t, [live.id]), 1);
    assert.deepEqual(await outcome(live.id), ['completed', null]);

    const accepted = await t.db
      .selectFrom('slips')
      .select(['is_sandbox', 'identity'])
      .where('reference', '=', reference)
      .where('accepted', '=', true)
      .orderBy('is_sandbox')
      .execute();
    assert.deepEqual(accepted, [
      { is_sandbox: false, identity: `004:${reference}` },
      { is_sandbox: true, identity: `004:${reference}` },
    ]);
  });

  it('AUD keeps the null validator: a receipt without a slip QR waits for its seller, whose confirmation completes it', async () => {
    const aud = await pay(uniquePng(), 'AUD');
    assert.equal(aud.upload.statusCode, 200, aud.upload.body);
    await drainVerdicts(t);
    assert.deepEqual(await outcome(aud.id), ['confirming', null]);
    assert.equal(await confirmAwaitingLegs(t, [aud.id]), 1);
    assert.deepEqual(await outcome(aud.id), ['completed', null]);
  });
});
