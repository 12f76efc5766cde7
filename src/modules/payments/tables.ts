import type { ColumnType, Selectable } from 'kysely';
import type { Json } from '../../db/schema.ts';

export type PaymentStatus =
  | 'created'
  | 'matching'
  | 'matched'
  | 'payment_pending'
  | 'confirming'
  | 'completed'
  | 'partially_paid'
  | 'failed'
  | 'expired'
  | 'cancelled'
  | 'settled';

export interface PaymentTables {
  payments: {
    id: string;
    merchant_id: string;
    is_sandbox: boolean;
    order_id: string;
    amount_minor: number;
    currency: string;
    payment_method: string;
    return_url: string;
    status: PaymentStatus;
    metadata: Json<Record<string, string>>;
    quote_lock_id: string | null;
    failure_reason: string | null;
    synthetic_match: Json<Record<string, unknown>> | null;
    settlement_id: string | null;
    /** The payment link this payment was made from (migration 0320), or null. */
    payment_link_id: ColumnType<string | null, string | null | undefined, string | null>;
    /**
     * The receipt (migration 0321): its number, sequential per merchant and mode, and the unguessable token of its
     * page; set by the receipts module's trigger `payments_assign_receipt` when the payment completes or ends partly
     * paid, never by this module.
     */
    receipt_number: number | null;
    receipt_token: string | null;
    /** The settlement fee taken at completion (migration 0220); null until the payment completes. */
    fee_bps: ColumnType<number | null, number | null | undefined, number | null>;
    fee_minor: ColumnType<number | null, number | null | undefined, number | null>;
    fee_micro_pay: ColumnType<number | null, number | null | undefined, number | null>;
    /** What arrived (migration 0270): the amount once completed, the verified legs' fiat when partly paid, else 0. */
    amount_received_minor: ColumnType<number, number | undefined, number>;
    /** Succeeded refunds, minor units (migration 0310; written through payments/refunds.ts only). */
    amount_refunded_minor: ColumnType<number, number | undefined, number>;
    expires_at: Date;
    created_at: Date;
    matched_at: Date | null;
    checkout_opened_at: Date | null;
    confirming_at: Date | null;
    completed_at: Date | null;
    partially_paid_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
    failed_at: Date | null;
    expired_at: Date | null;
    cancelled_at: Date | null;
    settled_at: Date | null;
  };
  payment_legs: {
    payment_id: string;
    match_order: number;
    seller_id: string;
    allocated_fiat_amount: number;
    rate: string;
    amount_micro_pay: number;
    /** Liquidity held at the seller's own rate; null means allocated_fiat_amount (see migration 0130). */
    reserved_minor: ColumnType<number | null, number | null | undefined, number | null>;
  };
  payment_proofs: {
    id: string;
    payment_id: string;
    /** The leg this slip pays (one slip per leg; migration 0210). */
    match_order: number;
    is_sandbox: boolean;
    sha256: string;
    content_type: string;
    size_bytes: number;
    data: Uint8Array;
    /** `awaiting_payee`: the slip passed the checks it got, which are not evidence for live money (DESIGN 3b). */
    verdict: 'verified' | 'failed' | 'unverified' | 'timeout' | 'awaiting_payee' | null;
    verdict_reason: string | null;
    validator_kind: string | null;
    validator_response: Json<Record<string, unknown>> | null;
    attempts: number;
    next_attempt_at: Date;
    claimed_until: Date | null;
    created_at: Date;
    /** Who decided a leg that waited for its payee (migration 0270). */
    decided_by: ColumnType<
      'seller' | 'operator' | null,
      'seller' | 'operator' | null | undefined,
      'seller' | 'operator' | null
    >;
    decided_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
    /** The payee's (or operator's) words when it rejected the leg. */
    decision_reason: ColumnType<string | null, string | null | undefined, string | null>;
    awaiting_payee_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  };
}

export type PaymentRow = Selectable<PaymentTables['payments']>;
export type LegRow = Selectable<PaymentTables['payment_legs']>;
export type ProofRow = Selectable<PaymentTables['payment_proofs']>;
