import type {
  ReceiptCheck,
  ReceiptValidator,
  ValidatorOutcome,
  ValidatorVerdict,
} from '../../src/modules/validators/port.ts';

/**
 * The one validator double: a test scripts its next outcomes in `next` (then `fallback`, default `verified`); it
 * counts its calls and keeps every check it was asked (`checks`). A `failed` verdict carries `failure_reason`.
 * It stands for a verification provider that checked amount, payee and reference (`easyslip`), so its `verified`
 * completes a live leg; `kind: 'null_validator'` or `'slip_qr'` makes it a validator that checks nothing, whose
 * `verified` leaves a live leg waiting for its payee (DESIGN 3b).
 */
export class ScriptedValidator implements ReceiptValidator {
  kind: 'easyslip' | 'null_validator' | 'slip_qr';
  calls = 0;
  readonly checks: ReceiptCheck[] = [];
  next: ValidatorOutcome[] = [];
  fallback: ValidatorOutcome = 'verified';
  readonly failure_reason: string;

  constructor(
    options: {
      failure_reason?: string;
      fallback?: ValidatorOutcome;
      kind?: 'easyslip' | 'null_validator' | 'slip_qr';
    } = {},
  ) {
    this.kind = options.kind ?? 'easyslip';
    this.failure_reason = options.failure_reason ?? 'amount_mismatch';
    if (options.fallback) this.fallback = options.fallback;
  }

  async validate(check: ReceiptCheck): Promise<ValidatorVerdict> {
    this.calls += 1;
    this.checks.push(check);
    const outcome = this.next.shift() ?? this.fallback;
    return {
      outcome,
      validator_kind: this.kind,
      ...(outcome === 'failed' ? { reason: this.failure_reason } : {}),
      response: { scripted: true, outcome, call: this.calls },
    };
  }
}

export function scriptedValidator(
  options: {
    failure_reason?: string;
    fallback?: ValidatorOutcome;
    kind?: 'easyslip' | 'null_validator' | 'slip_qr';
  } = {},
): ScriptedValidator {
  return new ScriptedValidator(options);
}
