import type { ReceiptValidator } from './port.ts';

/** Accepts every receipt: the receiver's own confirmation is the evidence (where slips are checked elsewhere). */
export const nullValidator: ReceiptValidator = {
  kind: 'null_validator',
  async validate(check) {
    return {
      outcome: 'verified',
      validator_kind: 'null_validator',
      response: {
        validator: 'null_validator',
        accepted: true,
        bytes: check.image.byteLength,
        content_type: check.content_type,
      },
    };
  },
};
