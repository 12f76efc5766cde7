import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Json } from '../../db/schema.ts';
import type { PayoutDestination } from '../reference/payout-destinations.ts';
import type { ValidatorKind, ValidatorOutcome } from '../validators/port.ts';

export type RefundStatus = 'requires_action' | 'pending' | 'succeeded' | 'failed' | 'canceled';
export type RefundReason = 'duplicate' | 'fraudulent' | 'requested_by_customer' | 'partial_delivery';
export type RefundFunding = 'merchant_transfer' | 'pay_balance';

export interface RefundTables {
  refunds: {
    id: string;
    merchant_id: string;
    is_sandbox: boolean;
    payment_id: string;
    amount_minor: number;
    currency: string;
    status: RefundStatus;
    reason: RefundReason | null;
    funding: RefundFunding;
    /** The buyer's destination (a payout destination, 3a), null until the merchant or the buyer names it. */
    destination: Json<PayoutDestination | null>;
    /** The claim page's credential: `<PUBLIC_BASE_URL>/refunds/claim/<claim_token>`. */
    claim_token: string;
    claim_expires_at: Date;
    failure_reason: string | null;
    metadata: Json<Record<string, string>>;
    /** pay_balance: the PAY held for this refund (null for merchant_transfer). */
    hold_micro_pay: number | null;
    /** pay_balance: the sell order that pays the buyer, once the destination is known. */
    sell_order_id: string | null;
    /** Since when a slip no provider checked waits for the buyer's word (silence for REFUND_CONFIRM_DAYS stands). */
    awaiting_buyer_since: Date | null;
    created_at: Date;
    destination_at: Date | null;
    succeeded_at: Date | null;
    failed_at: Date | null;
    canceled_at: Date | null;
    /** A succeeded refund's receipt page token (migration 0322), set by the receipts module's trigger. */
    receipt_token: ColumnType<string | null, string | null | undefined, string | null>;
  };
  refund_proofs: {
    id: string;
    /** Arrival order (several slips may arrive in one millisecond). */
    seq: Generated<number>;
    refund_id: string;
    sha256: string;
    content_type: string;
    size_bytes: number;
    data: Uint8Array;
    outcome: ValidatorOutcome;
    reason: string | null;
    reference: string | null;
    validator_kind: ValidatorKind;
    validator_response: Json<Record<string, unknown>>;
    /** A provider checked the amount and the payee against the bank's record (otherwise the buyer's word decides). */
    checked_by_provider: boolean;
    created_at: ColumnType<Date, Date, never>;
  };
}

export type RefundRow = Selectable<RefundTables['refunds']>;
export type RefundProofRow = Selectable<RefundTables['refund_proofs']>;
