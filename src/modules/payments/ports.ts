import type { Trx } from '../../db/database.ts';
import type { Currency } from '../../lib/money.ts';
import type { MerchantScope } from '../../http/principal.ts';
import type { LegRow, PaymentRow } from './tables.ts';

/**
 * Called inside the completion transaction, after the payment became `completed`: moves PAY from the matched
 * sellers to the merchant less the settlement fee, and the fee to the fees account (idempotency keys
 * `payment:<id>:leg:<n>` and `...:fee`), and returns the payment with its fee recorded. A throw rolls the completion
 * back; the verdict is retried.
 */
export interface PaymentCompletionPort {
  onCompleted(trx: Trx, payment: PaymentRow, legs: readonly LegRow[]): Promise<PaymentRow>;
}

export const noCompletionEffects: PaymentCompletionPort = {
  async onCompleted(_trx, payment) {
    return payment;
  },
};

/**
 * Consumes an FX quote lock inside the create transaction (the FX module implements it). Refuses an expired,
 * used, foreign or mismatched lock with a 409 code before anything is written.
 */
export interface QuoteLockPort {
  consume(
    trx: Trx,
    scope: MerchantScope,
    lock_id: string,
    expect: { currency: Currency; payment_id: string },
    at: Date,
  ): Promise<{ rate: string }>;
}
