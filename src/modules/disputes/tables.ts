import type { Selectable } from 'kysely';
import type { Json } from '../../db/schema.ts';

export type DisputeKind = 'cash_leg_failure' | 'merchant_dispute' | 'chargeback';
export type DisputeStatus = 'opened' | 'investigating' | 'resolved' | 'escalated';
export type DisputeOutcome = 'favor_merchant' | 'favor_counterparty' | 'no_action';
export type DisputeAction = 'opened' | 'investigating' | 'escalated' | 'resolved';
/**
 * What a resolution did to PAY. `return_to_seller`: the disputed fills' PAY from their buyers back to the seller (the
 * seller was not paid after all); `return_to_buyers`: the paid fills' PAY from the seller back to their buyers (the
 * buyers did pay); `complete_cash_leg` / `fail_cash_leg`: an order in flight completed or failed as its cash leg would
 * have; `none`. `mint` and `burn` are kept on resolutions made before resolutions followed the fiat.
 */
export type LedgerEffect =
  | 'return_to_seller'
  | 'return_to_buyers'
  | 'complete_cash_leg'
  | 'fail_cash_leg'
  | 'none'
  | 'mint'
  | 'burn';
/** Which party opened a dispute: the sell order's owner, a merchant whose buy order filled it, or the gateway. */
export type DisputeOpener = 'seller' | 'buyer' | 'gateway';

export interface DisputeTables {
  disputes: {
    id: string;
    merchant_id: string;
    is_sandbox: boolean;
    sell_order_id: string;
    kind: DisputeKind;
    status: DisputeStatus;
    notes: string;
    opened_by_user_id: string;
    opened_by: DisputeOpener;
    /** The merchant who opened it (the seller's or a buyer's); null when the gateway did. */
    opened_by_merchant_id: string | null;
    outcome: DisputeOutcome | null;
    ledger_effect: LedgerEffect | null;
    ledger_amount_micro_pay: number | null;
    ledger_transfer_id: string | null;
    created_at: Date;
    investigating_at: Date | null;
    escalated_at: Date | null;
    resolved_at: Date | null;
  };
  /** The opener's evidence (a buyer's own payment slip), at most one per dispute. */
  dispute_evidence: {
    dispute_id: string;
    content_type: string;
    sha256: string;
    bytes: Uint8Array;
    created_at: Date;
  };
  dispute_events: {
    id: string;
    dispute_id: string;
    seq: number;
    action: DisputeAction;
    from_status: DisputeStatus | null;
    to_status: DisputeStatus;
    actor_user_id: string;
    actor_role: string;
    notes: string | null;
    details: Json<Record<string, unknown>>;
    created_at: Date;
  };
}

export type DisputeRow = Selectable<DisputeTables['disputes']>;
export type DisputeEventRow = Selectable<DisputeTables['dispute_events']>;
