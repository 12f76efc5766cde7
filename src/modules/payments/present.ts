import { iso } from '../../http/schemas.ts';
import { minorToDecimal, type Currency } from '../../lib/money.ts';
import { normalizeRate } from '../liquidity/service.ts';
import type { LegProof, MatchDetail, PaymentView } from './schema.ts';
import type { LegRow, PaymentRow } from './tables.ts';

export type { MatchDetail, PaymentView } from './schema.ts';

/** A leg as presented: its row and, when loaded, its slip. */
export type PresentedLeg = LegRow & { proof?: LegProof | null };

/** Payment states after which a slip without a final verdict is never judged. */
const ENDED_UNPAID: readonly string[] = ['failed', 'expired', 'cancelled', 'partially_paid'];

/** A stored proof's verdict as the leg's slip state, on a payment in `payment_status`. */
export function legProof(
  row: { id: string; verdict: string | null; verdict_reason: string | null; created_at: Date | string },
  payment_status: string,
): LegProof {
  const status: LegProof['status'] =
    row.verdict === 'verified'
      ? 'verified'
      : row.verdict === 'failed'
        ? 'rejected'
        : ENDED_UNPAID.includes(payment_status)
          ? 'not_checked'
          : row.verdict === 'awaiting_payee'
            ? 'awaiting_payee'
            : 'checking';
  return {
    id: row.id,
    status,
    reason: status === 'rejected' ? row.verdict_reason : null,
    received_at: new Date(row.created_at).toISOString(),
  };
}

export function presentLegs(legs: readonly PresentedLeg[]): MatchDetail[] {
  return [...legs]
    .sort((a, b) => a.match_order - b.match_order)
    .map((leg) => ({
      seller_id: leg.seller_id,
      match_order: leg.match_order,
      allocated_fiat_amount: leg.allocated_fiat_amount,
      rate: normalizeRate(leg.rate),
      amount_micro_pay: leg.amount_micro_pay,
      proof: leg.proof ?? null,
    }));
}

/** The columns a payment's view is made of: the reads select just these (six timestamps fewer to parse per row). */
export const PRESENTED_COLUMNS = [
  'id',
  'merchant_id',
  'is_sandbox',
  'order_id',
  'amount_minor',
  'amount_received_minor',
  'currency',
  'payment_method',
  'return_url',
  'status',
  'metadata',
  'quote_lock_id',
  'failure_reason',
  'synthetic_match',
  'expires_at',
  'created_at',
  'matched_at',
  'completed_at',
  'fee_minor',
  'fee_micro_pay',
  'amount_refunded_minor',
  'payment_link_id',
  'receipt_number',
  'receipt_token',
] as const satisfies readonly (keyof PaymentRow)[];
export type PresentedPayment = Pick<PaymentRow, (typeof PRESENTED_COLUMNS)[number]>;

/** What arrived: the whole amount once completed (or settled), the verified legs' fiat when partly paid, else 0. */
export function amountReceived(payment: Pick<PaymentRow, 'status' | 'amount_minor' | 'amount_received_minor'>): number {
  if (payment.status === 'completed' || payment.status === 'settled') return Number(payment.amount_minor);
  if (payment.status === 'partially_paid') return Number(payment.amount_received_minor);
  return 0;
}

/** True when succeeded refunds add up to what the payment received. */
export function isRefunded(
  payment: Pick<PaymentRow, 'status' | 'amount_minor' | 'amount_received_minor' | 'amount_refunded_minor'>,
): boolean {
  const received = amountReceived(payment);
  return received > 0 && Number(payment.amount_refunded_minor) >= received;
}

/** A payment to present: its timestamps as Dates, or as the ISO text a list selects. */
export type PresentablePayment = Omit<PresentedPayment, 'expires_at' | 'created_at' | 'matched_at' | 'completed_at'> & {
  expires_at: Date | string;
  created_at: Date | string;
  matched_at: Date | string | null;
  completed_at: Date | string | null;
};

/** A timestamp as the view shows it: ISO text as it is, a Date formatted. */
const shown = (value: Date | string | null): string | null =>
  value === null || typeof value === 'string' ? value : iso(value);

export function presentPayment(
  payment: PresentablePayment,
  legs: readonly PresentedLeg[],
  public_base_url: string,
): PaymentView {
  return {
    id: payment.id,
    merchant_id: payment.merchant_id,
    order_id: payment.order_id,
    amount: payment.amount_minor,
    amount_decimal: minorToDecimal(payment.amount_minor, payment.currency as Currency),
    amount_received: amountReceived(payment),
    currency: payment.currency,
    payment_method: payment.payment_method,
    return_url: payment.return_url,
    checkout_url: `${public_base_url}/checkout/${payment.id}`,
    status: payment.status,
    expires_at: shown(payment.expires_at)!,
    is_sandbox: payment.is_sandbox,
    created_at: shown(payment.created_at)!,
    matched_at: shown(payment.matched_at),
    completed_at: shown(payment.completed_at),
    failure_reason: payment.failure_reason,
    metadata: payment.metadata,
    quote_lock_id: payment.quote_lock_id,
    payment_link_id: payment.payment_link_id,
    receipt_number: payment.receipt_number,
    receipt_url: payment.receipt_token === null ? null : `${public_base_url}/receipts/${payment.receipt_token}`,
    fee_minor: payment.fee_minor === null ? null : Number(payment.fee_minor),
    fee_micro_pay: payment.fee_micro_pay === null ? null : Number(payment.fee_micro_pay),
    amount_refunded: Number(payment.amount_refunded_minor),
    refunded: isRefunded(payment),
    match_details: presentLegs(legs),
    ...(payment.synthetic_match ? { synthetic_match: payment.synthetic_match } : {}),
  };
}

/** The contract's flat payment envelope fields, beside `data`. */
export function paymentEventFields(view: PaymentView): Record<string, unknown> {
  return {
    payment_id: view.id,
    order_id: view.order_id,
    amount: view.amount,
    currency: view.currency,
    status: view.status,
    ...(view.match_details.length > 1 ? { match_details: view.match_details } : {}),
  };
}
