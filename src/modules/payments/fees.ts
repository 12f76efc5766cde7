import type { Trx } from '../../db/database.ts';
import { fiatMinorToMicroPay, isCurrency, toSafeNumber } from '../../lib/money.ts';
import { assert } from '../../lib/assert.ts';
import type { LegRow, PaymentRow } from './tables.ts';

/** A payment's settlement fee: one fee in two units, per leg and in total (the totals are the legs' sums). */
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

type FeeLeg = Pick<LegRow, 'match_order' | 'allocated_fiat_amount' | 'rate' | 'amount_micro_pay'>;

/**
 * The fee of a payment's legs at `fee_bps`, one fee in two units: each leg's fiat fee is `feeOf` its fiat amount
 * (rounded down to a minor unit), and its PAY fee is that same fiat at the leg's own rate (rounded down to a
 * micro-PAY), so fractions of both stay with the merchant and the statement's fiat fee and the ledger's PAY fee are
 * the same money. The payment's fee is the sum over the legs given (all of them, or the paid ones alone).
 */
export function paymentFee(
  payment: Pick<PaymentRow, 'currency'>,
  legs: readonly FeeLeg[],
  fee_bps: number,
): PaymentFee {
  const currency = payment.currency;
  assert(isCurrency(currency), `payment currency ${currency} is a known currency`);
  let fee_minor = 0;
  const legs_micro_pay = new Map<number, number>();
  for (const leg of legs) {
    const leg_fee_minor = feeOf(leg.allocated_fiat_amount, fee_bps);
    const leg_fee_micro_pay = leg_fee_minor === 0 ? 0 : fiatMinorToMicroPay(leg_fee_minor, currency, leg.rate);
    assert(
      leg_fee_micro_pay <= leg.amount_micro_pay,
      `leg ${leg.match_order} fee of ${leg_fee_micro_pay} micro-PAY is within its ${leg.amount_micro_pay}`,
    );
    fee_minor += leg_fee_minor;
    legs_micro_pay.set(leg.match_order, leg_fee_micro_pay);
  }
  const fee_micro_pay = [...legs_micro_pay.values()].reduce((sum, fee) => sum + fee, 0);
  return { fee_bps, fee_minor, fee_micro_pay, legs_micro_pay };
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
