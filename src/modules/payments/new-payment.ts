import type { Trx } from '../../db/database.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { present } from '../../lib/assert.ts';
import { decimalToMinor, METHODS_BY_CURRENCY, type Currency, type PaymentMethod } from '../../lib/money.ts';
import { duplicateOrderId, invalidAmount, paymentMethodUnsupported } from './errors.ts';
import { paymentIdByOrderId } from './stats.ts';
import type { LegRow, PaymentRow } from './tables.ts';

export interface CreatePaymentInput {
  order_id: string;
  amount: number | string;
  currency: Currency;
  return_url: string;
  payment_method?: PaymentMethod | undefined;
  expires_in_seconds?: number | undefined;
  metadata?: Record<string, string> | undefined;
  quote_lock_id?: string | undefined;
  /** The payment link a buyer used (the payment-links module's page). */
  payment_link_id?: string | undefined;
}

export const DEFAULT_EXPIRES_IN_SECONDS = 900;

export function toMinor(amount: number | string, currency: Currency): number {
  const minor = typeof amount === 'number' ? amount : decimalToMinor(amount, currency);
  if (minor === null || !Number.isSafeInteger(minor) || minor <= 0) {
    throw invalidAmount(currency);
  }
  return minor;
}

/** The currency's default rail, or the requested one when the currency supports it (else 400). */
export function resolvePaymentMethod(currency: Currency, requested: PaymentMethod | undefined): PaymentMethod {
  const methods = METHODS_BY_CURRENCY[currency];
  const payment_method = requested ?? present(methods[0], `${currency} has a default payment method`);
  if (!methods.includes(payment_method)) {
    throw paymentMethodUnsupported(currency, methods, payment_method);
  }
  return payment_method;
}

export interface NewPayment {
  id: string;
  scope: MerchantScope;
  order_id: string;
  amount_minor: number;
  currency: Currency;
  payment_method: PaymentMethod;
  return_url: string;
  metadata: Record<string, string>;
  quote_lock_id: string | null;
  payment_link_id?: string | null;
  expires_at: Date;
  created_at: Date;
  /** Insert straight as `matched` (its legs are planned already; created and matching carry no event). */
  matched_at?: Date;
}

/**
 * A sandbox simulation's match: its synthetic legs and the contract's `synthetic_match` block (the sandbox module
 * plays the scenario; the payments module alone writes payment rows).
 */
export async function recordSyntheticMatch(
  trx: Trx,
  payment_id: string,
  legs: readonly LegRow[],
  synthetic_match: Record<string, unknown>,
): Promise<void> {
  await trx
    .insertInto('payment_legs')
    .values([...legs])
    .execute();
  await trx
    .updateTable('payments')
    .set({ synthetic_match: JSON.stringify(synthetic_match) })
    .where('id', '=', payment_id)
    .execute();
}

/** The row of a new payment: `created`, or `matched` when its legs are planned already (NewPayment.matched_at). */
export function newPaymentRow(input: NewPayment): PaymentRow {
  return {
    id: input.id,
    merchant_id: input.scope.merchant_id,
    is_sandbox: input.scope.is_sandbox,
    order_id: input.order_id,
    amount_minor: input.amount_minor,
    currency: input.currency,
    payment_method: input.payment_method,
    return_url: input.return_url,
    status: input.matched_at ? 'matched' : 'created',
    metadata: input.metadata,
    quote_lock_id: input.quote_lock_id,
    failure_reason: null,
    synthetic_match: null,
    settlement_id: null,
    payment_link_id: input.payment_link_id ?? null,
    receipt_number: null,
    receipt_token: null,
    fee_bps: null,
    fee_minor: null,
    fee_micro_pay: null,
    amount_received_minor: 0,
    amount_refunded_minor: 0,
    expires_at: input.expires_at,
    created_at: input.created_at,
    matched_at: input.matched_at ?? null,
    checkout_opened_at: null,
    confirming_at: null,
    completed_at: null,
    partially_paid_at: null,
    failed_at: null,
    expired_at: null,
    cancelled_at: null,
    settled_at: null,
  };
}

/**
 * Inserts a payment in status `created` (or `matched`, see NewPayment) inside `trx`. A duplicate order_id (per
 * merchant and mode) is 409 PAYMENT_DUPLICATE_ORDER_ID: the unique index decides, also against a concurrent insert
 * (which this one waits for), and only then is the existing id read for the message.
 */
export async function insertPayment(trx: Trx, input: NewPayment): Promise<PaymentRow> {
  const row = newPaymentRow(input);
  const inserted = await trx
    .insertInto('payments')
    .values({ ...row, metadata: JSON.stringify(row.metadata) })
    .onConflict((conflict) => conflict.constraint('payments_order_id_unique').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!inserted) {
    throw duplicateOrderId(input.order_id, (await paymentIdByOrderId(trx, input.scope, input.order_id)) ?? undefined);
  }
  return row;
}
