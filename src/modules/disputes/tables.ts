import type { Selectable } from 'kysely';
import type { Json } from '../../db/schema.ts';

export type DisputeKind = 'cash_leg_failure' | 'merchant_dispute' | 'chargeback';
export type DisputeStatus = 'opened' | 'investigating' | 'resolved' | 'escalated';
export type DisputeOutcome = 'favor_merchant' | 'favor_counterparty' | 'no_action';
export type DisputeAction = 'opened' | 'investigating' | 'escalated' | 'resolved';
export type LedgerEffect = 'mint' | 'burn' | 'none';

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
    outcome: DisputeOutcome | null;
    ledger_effect: LedgerEffect | null;
    ledger_amount_micro_pay: number | null;
    ledger_transfer_id: string | null;
    created_at: Date;
    investigating_at: Date | null;
    escalated_at: Date | null;
    resolved_at: Date | null;
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
