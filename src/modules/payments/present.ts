import { iso } from '../../http/schemas.ts';
import { minorToDecimal, type Currency } from '../../lib/money.ts';
import { normalizeRate } from '../liquidity/service.ts';
import type { LegRow, PaymentRow } from './tables.ts';

export interface MatchDetail {
  seller_id: string;
  match_order: number;
  allocated_fiat_amount: number;
  rate: string;
  amount_micro_pay: number;
}

export interface PaymentView {
  id: string;
  merchant_id: string;
  order_id: string;
  amount: number;
  amount_decimal: string;
  currency: string;
  payment_method: string;
  return_url: string;
  checkout_url: string;
  status: string;
  expires_at: string;
  is_sandbox: boolean;
  created_at: string;
  matched_at: string | null;
  completed_at: string | null;
  failure_reason: string | null;
  metadata: Record<string, string>;
  quote_lock_id: string | null;
  match_details: MatchDetail[];
  synthetic_match?: Record<string, unknown>;
}

export function presentLegs(legs: readonly LegRow[]): MatchDetail[] {
  return [...legs]
    .sort((a, b) => a.match_order - b.match_order)
    .map((leg) => ({
      seller_id: leg.seller_id,
      match_order: leg.match_order,
      allocated_fiat_amount: leg.allocated_fiat_amount,
      rate: normalizeRate(leg.rate),
      amount_micro_pay: leg.amount_micro_pay,
    }));
}

export function presentPayment(payment: PaymentRow, legs: readonly LegRow[], public_base_url: string): PaymentView {
  return {
    id: payment.id,
    merchant_id: payment.merchant_id,
    order_id: payment.order_id,
    amount: payment.amount_minor,
    amount_decimal: minorToDecimal(payment.amount_minor, payment.currency as Currency),
    currency: payment.currency,
    payment_method: payment.payment_method,
    return_url: payment.return_url,
    checkout_url: `${public_base_url}/checkout/${payment.id}`,
    status: payment.status,
    expires_at: iso(payment.expires_at),
    is_sandbox: payment.is_sandbox,
    created_at: iso(payment.created_at),
    matched_at: iso(payment.matched_at),
    completed_at: iso(payment.completed_at),
    failure_reason: payment.failure_reason,
    metadata: payment.metadata,
    quote_lock_id: payment.quote_lock_id,
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
