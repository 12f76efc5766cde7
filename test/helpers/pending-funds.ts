import { randomBytes } from 'node:crypto';
import { INTERNAL_TOKEN, type TestApp } from './app.ts';

export const PNG_BASE64 = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]).toString('base64');
/** A receipt unlike any other (a receipt accepted for one pending fund is a duplicate on another). */
export const receipt = () => ({
  receipt_base64: Buffer.concat([Buffer.from(PNG_BASE64, 'base64'), randomBytes(8)]).toString('base64'),
  content_type: 'image/png',
});

export async function createPendingFunds(
  t: TestApp,
  receiver_merchant_id: string,
  amount_minor = 5_000_000,
  extra: Record<string, unknown> = {},
) {
  const response = await t.request({
    method: 'POST',
    url: '/internal/pending-funds',
    headers: { authorization: `Bearer ${INTERNAL_TOKEN}` },
    payload: { receiver_merchant_id, amount_minor, payer_reference: `payer-${Math.random()}`, ...receipt(), ...extra },
  });
  return response;
}
