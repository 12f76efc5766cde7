import type { Trx } from '../../db/database.ts';
import type { Currency } from '../../lib/money.ts';
import type { MerchantScope } from '../../http/principal.ts';
import type { LegRow, PaymentRow } from './tables.ts';

/**
 * Called inside the completion transaction, after the payment became `completed`: moves PAY from the matched
 * sellers to the merchant (the ledger module implements it, idempotency key `payment:<id>:leg:<n>`). A throw
 * rolls the completion back; the verdict is retried.
 */
export interface PaymentCompletionPort {
  onCompleted(trx: Trx, payment: PaymentRow, legs: readonly LegRow[]): Promise<void>;
}

export const noCompletionEffects: PaymentCompletionPort = { async onCompleted() {} };

/**
 * Consumes an FX quote lock inside the create transaction (the FX module implements it). Refuses an expired,
 * used, foreign or mismatched lock with a 409 code before anything is written.
 */
export interface QuoteLockPort {
  consume(trx: Trx, scope: MerchantScope, lock_id: string, expect: { currency: Currency; payment_id: string }, at: Date): Promise<{ rate: string }>;
}
