import type {
  ReceiptCheck,
  ReceiptValidator,
  ValidatorOutcome,
  ValidatorVerdict,
} from '../../src/modules/validators/port.ts';

/**
 * The one validator double: a test scripts its next outcomes in `next` (then `fallback`, default `verified`); it
 * counts its calls and keeps every check it was asked (`checks`). A `failed` verdict carries `failure_reason`.
 */
export class ScriptedValidator implements ReceiptValidator {
  readonly kind = 'null_validator' as const;
  calls = 0;
  readonly checks: ReceiptCheck[] = [];
  next: ValidatorOutcome[] = [];
  fallback: ValidatorOutcome = 'verified';
  readonly failure_reason: string;

  constructor(options: { failure_reason?: string; fallback?: ValidatorOutcome } = {}) {
    this.failure_reason = options.failure_reason ?? 'amount_mismatch';
    if (options.fallback) this.fallback = options.fallback;
  }

  async validate(check: ReceiptCheck): Promise<ValidatorVerdict> {
    this.calls += 1;
    this.checks.push(check);
    const outcome = this.next.shift() ?? this.fallback;
    return {
      outcome,
      validator_kind: 'null_validator',
      ...(outcome === 'failed' ? { reason: this.failure_reason } : {}),
      response: { scripted: true, outcome, call: this.calls },
    };
  }
}

export function scriptedValidator(
  options: { failure_reason?: string; fallback?: ValidatorOutcome } = {},
): ScriptedValidator {
  return new ScriptedValidator(options);
}
