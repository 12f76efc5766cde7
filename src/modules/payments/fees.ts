import type { Trx } from '../../db/database.ts';
import { toSafeNumber } from '../../lib/money.ts';
import type { LegRow, PaymentRow } from './tables.ts';

/** A payment's settlement fee: fiat for the statement, PAY per leg for the ledger (their sum is the payment's). */
export interface PaymentFee {
  fee_bps: number;
  fee_minor: number;
  fee_micro_pay: number;
  /** By match_order: the PAY each leg's posting sends to the fees account instead of the merchant. */
  legs_micro_pay: Map<number, number>;
}

/** `floor(amount * fee_bps / 10000)`: rounding down leaves every fraction with the merchant. */
export function feeOf(amount: number, fee_bps: number): number {
  return toSafeNumber((BigInt(amount) * BigInt(fee_bps)) / 10_000n);
}

/**
 * The fee of a payment at `fee_bps`: in fiat on the whole amount, and in PAY on each leg's PAY (the leg's fiat at the
 * leg's rate), each rounded down, so fractions of a minor unit and of a micro-PAY stay with the merchant.
 */
export function paymentFee(
  payment: Pick<PaymentRow, 'amount_minor'>,
  legs: readonly Pick<LegRow, 'match_order' | 'amount_micro_pay'>[],
  fee_bps: number,
): PaymentFee {
  const legs_micro_pay = new Map(legs.map((leg) => [leg.match_order, feeOf(leg.amount_micro_pay, fee_bps)]));
  const fee_micro_pay = [...legs_micro_pay.values()].reduce((sum, fee) => sum + fee, 0);
  return { fee_bps, fee_minor: feeOf(payment.amount_minor, fee_bps), fee_micro_pay, legs_micro_pay };
}

/** Records the fee on a payment that has just completed, in the completing transaction; returns the updated row. */
export async function recordPaymentFee(trx: Trx, payment: PaymentRow, fee: PaymentFee): Promise<PaymentRow> {
  return trx
    .updateTable('payments')
    .set({ fee_bps: fee.fee_bps, fee_minor: fee.fee_minor, fee_micro_pay: fee.fee_micro_pay })
    .where('id', '=', payment.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
