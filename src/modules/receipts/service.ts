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

export interface ReceiptsDeps {
  db: Db;
  public_base_url: string;
}

/** A payment's refunds that are not failed or canceled, oldest first (the refunds module's rows, read only). */
async function refundsOf(deps: ReceiptsDeps, payment_id: string): Promise<ReceiptRefund[]> {
  const rows = await deps.db
    .selectFrom('refunds')
    .select(['id', 'amount_minor', 'status', 'created_at', 'succeeded_at', 'receipt_token'])
    .where('payment_id', '=', payment_id)
    .where('status', 'not in', ['failed', 'canceled'])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    amount_minor: Number(row.amount_minor),
    status: row.status,
    created_at: row.created_at,
    succeeded_at: row.succeeded_at,
    receipt_url: row.receipt_token ? `${deps.public_base_url}/receipts/${row.receipt_token}` : null,
  }));
}

/** A succeeded refund's own receipt: the refund, and the payment it gave money back from. */
export interface RefundReceipt {
  merchant_name: string;
  is_sandbox: boolean;
  refund_id: string;
  amount_minor: number;
  currency: Currency;
  refunded_at: Date;
  /** The bank reference of the slip that proved the transfer, when one did. */
  reference: string | null;
  payment: {
    id: string;
    order_id: string;
    receipt_number: number | null;
    receipt_url: string | null;
    amount_minor: number;
  };
}

/** The succeeded refund behind a receipt token, or undefined. */
export async function refundReceipt(deps: ReceiptsDeps, token: string): Promise<RefundReceipt | undefined> {
  const refund = await deps.db
    .selectFrom('refunds')
    .selectAll()
    .where('receipt_token', '=', token)
    .where('status', '=', 'succeeded')
    .executeTakeFirst();
  if (!refund) return undefined;
  const payment = await deps.db
    .selectFrom('payments')
    .select(['id', 'order_id', 'receipt_number', 'receipt_token', 'amount_minor'])
    .where('id', '=', refund.payment_id)
    .executeTakeFirstOrThrow();
  const proof = await deps.db
    .selectFrom('refund_proofs')
    .select('reference')
    .where('refund_id', '=', refund.id)
    .where('outcome', '=', 'verified')
    .orderBy('seq', 'desc')
    .executeTakeFirst();
  return {
    merchant_name: (await merchantNames(deps.db, [refund.merchant_id])).get(refund.merchant_id) ?? '',
    is_sandbox: refund.is_sandbox,
    refund_id: refund.id,
    amount_minor: Number(refund.amount_minor),
    currency: refund.currency as Currency,
    refunded_at: refund.succeeded_at ?? refund.created_at,
    reference: proof?.reference ?? null,
    payment: {
      id: payment.id,
      order_id: payment.order_id,
      receipt_number: payment.receipt_number,
      receipt_url: payment.receipt_token ? `${deps.public_base_url}/receipts/${payment.receipt_token}` : null,
      amount_minor: Number(payment.amount_minor),
    },
  };
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
  const refunds = await refundsOf(deps, payment.id);
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
