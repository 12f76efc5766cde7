import { generate } from 'promptparse';
import QRCode from 'qrcode';
import { promptpayIdMalformed } from './errors.ts';

/** PromptPay proxy ids: a mobile number (0 + 9 digits), a national or tax id (13 digits) or an e-wallet id (15 digits). */
export const PROMPTPAY_ID_PATTERN = '^(0\\d{9}|\\d{13}|\\d{15})$';

function proxyType(promptpay_id: string): 'MSISDN' | 'NATID' | 'EWALLETID' {
  if (/^0\d{9}$/.test(promptpay_id)) return 'MSISDN';
  if (/^\d{13}$/.test(promptpay_id)) return 'NATID';
  if (/^\d{15}$/.test(promptpay_id)) return 'EWALLETID';
  throw promptpayIdMalformed();
}

/**
 * EMVCo tag-29 credit-transfer payload. `amount_minor` in satang (absent: a static QR the payer fills in).
 * promptparse formats the amount with two decimals; satang / 100 is exact to two decimals below 2^53.
 */
export function promptpayPayload(promptpay_id: string, amount_minor?: number): string {
  const type = proxyType(promptpay_id);
  return generate.anyId({
    type,
    target: promptpay_id,
    ...(amount_minor === undefined ? {} : { amount: amount_minor / 100 }),
  });
}

export async function qrPng(payload: string): Promise<Buffer> {
  return QRCode.toBuffer(payload, { type: 'png', errorCorrectionLevel: 'M', margin: 2, width: 360 });
}
