import type { Db } from '../../db/database.ts';
import { minorToDecimal, type Currency } from '../../lib/money.ts';
import { merchantNames } from '../merchants/service.ts';
import { findPaymentByReceiptToken } from '../payments/service.ts';
import { slipOwner, slipsOf } from '../validators/slips.ts';

/** A receipt's refund line: each refund of the payment that is not failed or canceled, with its state. */
export interface ReceiptRefund {
  id: string;
  amount_minor: number;
  status: string;
  created_at: Date;
  succeeded_at: Date | null;
  receipt_url: string | null;
}

/** How the receipts module learns a payment's refunds (the refunds module, once it is there). */
export type RefundsOfPayment = (payment_id: string) => Promise<ReceiptRefund[]>;

export interface ReceiptsDeps {
  db: Db;
  public_base_url: string;
  refunds_of?: RefundsOfPayment;
}

/** Everything a payment's receipt shows, reflecting the payment's current state. */
export interface PaymentReceipt {
  merchant_name: string;
  is_sandbox: boolean;
  number: number;
  payment_id: string;
  order_id: string;
  currency: Currency;
  payment_method: string;
  status: 'paid' | 'partly_paid';
  paid_at: Date;
  amount_minor: number;
  /** What arrived: the amount, or the verified legs' sum for a partly paid payment. */
  received_minor: number;
  legs: { match_order: number; amount_minor: number; reference: string | null; paid: boolean }[];
  refunds: ReceiptRefund[];
  refunded_minor: number;
}

export const decimal = (minor: number, currency: Currency): string => minorToDecimal(minor, currency);

/**
 * The payment behind a receipt token, as its receipt shows it now: the merchant's name, the amount, when it was paid,
 * the rail, each leg's bank reference (from its accepted slip) and every refund. Undefined for an unknown token.
 */
export async function paymentReceipt(deps: ReceiptsDeps, token: string): Promise<PaymentReceipt | undefined> {
  const found = await findPaymentByReceiptToken(deps, token);
  if (!found || found.payment.receipt_number === null) return undefined;
  const { payment, legs } = found;
  const number = found.payment.receipt_number;
  const slips = await slipsOf(
    deps.db,
    legs.map((leg) => slipOwner.paymentLeg(payment.id, leg.match_order)),
  );
  const accepted = new Map(slips.filter((slip) => slip.accepted).map((slip) => [slip.owner, slip]));
  const partly = (payment.status as string) === 'partially_paid';
  const receipt_legs = [...legs]
    .sort((a, b) => a.match_order - b.match_order)
    .map((leg) => {
      const slip = accepted.get(slipOwner.paymentLeg(payment.id, leg.match_order));
      return {
        match_order: leg.match_order,
        amount_minor: Number(leg.allocated_fiat_amount),
        reference: slip?.reference ?? null,
        paid: !partly || slip !== undefined,
      };
    });
  const received_minor = partly
    ? receipt_legs.filter((leg) => leg.paid).reduce((sum, leg) => sum + leg.amount_minor, 0)
    : Number(payment.amount_minor);
  const refunds = (await deps.refunds_of?.(payment.id)) ?? [];
  return {
    merchant_name: (await merchantNames(deps.db, [payment.merchant_id])).get(payment.merchant_id) ?? '',
    is_sandbox: payment.is_sandbox,
    number,
    payment_id: payment.id,
    order_id: payment.order_id,
    currency: payment.currency as Currency,
    payment_method: payment.payment_method,
    status: partly ? 'partly_paid' : 'paid',
    paid_at: payment.completed_at ?? payment.created_at,
    amount_minor: Number(payment.amount_minor),
    received_minor,
    legs: receipt_legs,
    refunds,
    refunded_minor: refunds
      .filter((refund) => refund.status === 'succeeded')
      .reduce((sum, refund) => sum + refund.amount_minor, 0),
  };
}
