import type { ColumnType, Selectable } from 'kysely';
import type { Json } from '../../db/schema.ts';
import type { PayoutDestination } from '../reference/payout-destinations.ts';
import type { ValidatorOutcome } from '../validators/port.ts';

export type SellOrderStatus = 'pending' | 'matched' | 'cash_leg_in_flight' | 'completed' | 'failed';
export type SellOrderFailureReason =
  | 'expired_unmatched'
  | 'cash_leg_retry_exhausted'
  | 'cancelled_by_merchant'
  /** A dispute on the order in flight was resolved for the seller: the buyers did not pay. */
  | 'cash_leg_disputed';

export interface SellOrderTables {
  sell_orders: {
    id: string;
    merchant_id: string;
    is_sandbox: boolean;
    status: SellOrderStatus;
    amount_micro_pay: number;
    currency: 'PAY';
    target_currency: string;
    target_fiat_amount: number;
    /** PAY of this order filled by buy orders so far; the order is `matched` when it equals amount_micro_pay. */
    filled_micro_pay: number;
    /** Fiat of the filled part at this order's price (the cash leg the merchant pays). */
    filled_fiat_amount: number;
    expires_at: Date;
    /** Where the buyers pay the seller (null only on orders from before destinations existed). */
    payout_destination: Json<PayoutDestination | null>;
    matched_buy_order_id: string | null;
    /** The issuance account the matcher minted the buyer's PAY from; the completion burn goes back to it. */
    mint_source_account: string | null;
    cash_leg_attempts: number;
    /** Refused slips of the fill with the most of them among those not yet confirmed paid (the retry budget is per fill). */
    cash_leg_retries_used: number;
    last_cash_leg_attempt_at: Date | null;
    last_cash_leg_outcome: ValidatorOutcome | null;
    failure_reason: SellOrderFailureReason | null;
    /**
     * The refund this order pays out (funding pay_balance, migration 0360): its reserve came from the refund hold, its
     * payout destination is the refund's buyer, and its end decides the refund. Null on a merchant's own order.
     */
    refund_id: ColumnType<string | null, string | null | undefined, string | null>;
    /** The open dispute holding the cash leg: while set, the sweeper does not fail the order. */
    held_by_dispute_id: ColumnType<string | null, string | null | undefined, string | null>;
    created_at: Date;
    matched_at: Date | null;
    cash_leg_requested_at: Date | null;
    completed_at: Date | null;
    failed_at: Date | null;
  };
  sell_order_cash_leg_attempts: {
    id: string;
    sell_order_id: string;
    attempt_number: number;
    outcome: ValidatorOutcome;
    reason: string | null;
    reference: string | null;
    content_type: string;
    receipt_sha256: string;
    validator_kind: string;
    validator_response: Json<Record<string, unknown>>;
    /** The fill (its buy order) whose transfer the slip shows; null on orders from before destinations existed. */
    buy_order_id: ColumnType<string | null, string | null | undefined, string | null>;
    created_at: Date;
  };
  /** A merchant's default payout destination per mode, used by sell orders that name none. */
  merchant_payout_destinations: {
    merchant_id: string;
    is_sandbox: boolean;
    destination: Json<PayoutDestination>;
    updated_at: Date;
  };
}

export type SellOrderRow = Selectable<SellOrderTables['sell_orders']>;
