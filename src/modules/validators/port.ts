/** The receipt validator port: `null_validator` (default) or `easyslip` (Thai slip verification over HTTP). */

export type ValidatorKind = 'null_validator' | 'easyslip';
export type ValidatorOutcome = 'verified' | 'failed' | 'unverified' | 'timeout';

export interface ReceiptCheck {
  image: Uint8Array;
  content_type: string;
  /** What the receipt must show, when known. */
  expected_amount_minor?: number;
  currency?: string;
  /** The account the money should have reached (masked numbers match partially). */
  receiver?: { promptpay_id?: string; account_number?: string; account_name?: string; payid?: string };
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
}

export interface ReceiptValidator {
  readonly kind: ValidatorKind;
  validate(check: ReceiptCheck): Promise<ValidatorVerdict>;
}
