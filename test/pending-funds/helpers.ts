import { INTERNAL_TOKEN, type TestApp } from '../helpers/app.ts';
import type { ReceiptValidator, ValidatorOutcome, ValidatorVerdict } from '../../src/modules/validators/port.ts';

/** A validator double whose next outcomes a test scripts; it counts its calls and defaults to `verified`. */
export class ScriptedValidator implements ReceiptValidator {
  readonly kind = 'null_validator' as const;
  calls = 0;
  queue: ValidatorOutcome[] = [];
  fallback: ValidatorOutcome = 'verified';
  async validate(): Promise<ValidatorVerdict> {
    this.calls += 1;
    const outcome = this.queue.shift() ?? this.fallback;
    return {
      outcome,
      validator_kind: 'null_validator',
      ...(outcome === 'failed' ? { reason: 'slip_not_found' } : {}),
      response: { scripted: true, outcome, call: this.calls },
    };
  }
}

export const PNG_BASE64 = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]).toString('base64');
export const RECEIPT = { receipt_base64: PNG_BASE64, content_type: 'image/png' };

export async function createPendingFunds(t: TestApp, receiver_merchant_id: string, amount_minor = 5_000_000, extra: Record<string, unknown> = {}) {
  const response = await t.request({
    method: 'POST',
    url: '/internal/pending-funds',
    headers: { authorization: `Bearer ${INTERNAL_TOKEN}` },
    payload: { receiver_merchant_id, amount_minor, payer_reference: `payer-${Math.random()}`, ...RECEIPT, ...extra },
  });
  return response;
}
