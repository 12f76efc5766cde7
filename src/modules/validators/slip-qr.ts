import type { ReceiptValidator, ValidatorVerdict } from './port.ts';
import { readSlip } from './read-slip.ts';

/**
 * `slip_qr`: the local slip check. It accepts an image only when it carries a well-formed slip-verification QR (the
 * mini QR every Thai bank slip prints: sending bank and transaction reference); that the reference is new is decided
 * by the slips ledger before any validator runs. It cannot see the amount or the receiving account, and says so in
 * `unverified_fields`: the slip proves that a bank issued a transfer with this reference, not to whom nor how much.
 */
export const slipQrValidator: ReceiptValidator = {
  kind: 'slip_qr',
  async validate(check): Promise<ValidatorVerdict> {
    const reading = check.reading ?? (await readSlip(check.image));
    const response = { validator: 'slip_qr', reading: reading.kind };
    switch (reading.kind) {
      case 'slip':
        return {
          outcome: 'verified',
          validator_kind: 'slip_qr',
          reference: reading.slip.reference,
          unverified_fields: ['amount', 'receiver'],
          response: {
            ...response,
            sending_bank: reading.slip.sending_bank,
            trans_ref: reading.slip.reference,
            unverified_fields: ['amount', 'receiver'],
          },
        };
      case 'other_qr':
        return {
          outcome: 'failed',
          validator_kind: 'slip_qr',
          reason: 'slip_qr_invalid',
          response: { ...response, qr_text: reading.text },
        };
      case 'no_qr':
        return { outcome: 'failed', validator_kind: 'slip_qr', reason: 'slip_qr_missing', response };
      case 'not_an_image':
        return { outcome: 'failed', validator_kind: 'slip_qr', reason: 'slip_not_an_image', response };
    }
  },
};
