/**
 * The receipt validator port: `null_validator`, `slip_qr` (the slip-verification QR read locally) or `easyslip`
 * (Thai slip verification over HTTP).
 */

export type ValidatorKind = 'null_validator' | 'easyslip' | 'slip_qr';
export type ValidatorOutcome = 'verified' | 'failed' | 'unverified' | 'timeout';

/** What a Thai bank slip's slip-verification QR says: the sending bank and the transaction reference. */
export interface SlipQr {
  sending_bank: string;
  reference: string;
}

/**
 * A Thai bank code as the slip QR prints it (`004`): digits padded to three, so a provider's `4` or `004` and the
 * QR's `004` name the same bank; anything else upper-cased.
 */
export function normalizeBankCode(code: string): string {
  const trimmed = code.trim();
  return /^\d{1,3}$/.test(trimmed) ? trimmed.padStart(3, '0') : trimmed.toUpperCase();
}

/** What reading a receipt's image found: a slip QR, a QR that is not one (its text), or no QR at all. */
export type SlipReading =
  | { kind: 'slip'; slip: SlipQr }
  | { kind: 'other_qr'; text: string }
  | { kind: 'no_qr' }
  | { kind: 'not_an_image' };

export interface ReceiptCheck {
  image: Uint8Array;
  content_type: string;
  /** What the receipt must show, when known. */
  expected_amount_minor?: number;
  currency?: string;
  /** The account the money should have reached (masked numbers match partially). */
  receiver?: { promptpay_id?: string; account_number?: string; account_name?: string; payid?: string };
  /**
   * Ask the provider to refuse a slip it has answered before. False when the gateway itself asked about this slip
   * before (a retry): the gateway's own slip records decide duplicates then.
   */
  check_duplicate?: boolean;
  /** The image as read locally (the slips ledger reads it once for every validator). */
  reading?: SlipReading;
}

export interface ValidatorVerdict {
  outcome: ValidatorOutcome;
  /** Set when outcome is `failed`: the provider's failure code or our check that failed. */
  reason?: string;
  validator_kind: ValidatorKind;
  /** The provider's full response, kept for audit. */
  response: Record<string, unknown>;
  /** Amount read off the receipt (audit only; never the amount credited). */
  observed_amount_minor?: number;
  /** Provider's transaction reference (duplicate detection). */
  reference?: string;
  /** Provider's code of the sending bank (with the reference, the slip's identity). */
  sending_bank?: string;
  /** What a `verified` verdict did not check (`amount`, `receiver`): the local slip check cannot see them. */
  unverified_fields?: string[];
}

export interface ReceiptValidator {
  readonly kind: ValidatorKind;
  validate(check: ReceiptCheck): Promise<ValidatorVerdict>;
}
