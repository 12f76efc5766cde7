import type { Selectable } from 'kysely';

export type SettlementStatus = 'pending' | 'completed' | 'failed';

export interface SettlementTables {
  settlements: {
    id: string;
    merchant_id: string;
    is_sandbox: boolean;
    currency: string;
    status: SettlementStatus;
    fee_bps: number;
    payment_count: number;
    gross_minor: number;
    fee_minor: number;
    /** The PAY the batch's payments sent to the fees account when they completed (migration 0220). */
    fee_micro_pay: number;
    adjustments_minor: number;
    net_minor: number;
    failure_reason: string | null;
    retry_count: number;
    created_at: Date;
    completed_at: Date | null;
    failed_at: Date | null;
  };
  settlement_items: {
    settlement_id: string;
    payment_id: string;
    order_id: string;
    amount_minor: number;
    fee_minor: number;
    fee_micro_pay: number;
    net_minor: number;
    payment_created_at: Date;
    completed_at: Date;
  };
  settlement_adjustments: {
    id: string;
    settlement_id: string;
    amount_minor: number;
    reason: string;
    actor_user_id: string;
    created_at: Date;
  };
}

export type SettlementRow = Selectable<SettlementTables['settlements']>;
export type SettlementItemRow = Selectable<SettlementTables['settlement_items']>;
export type SettlementAdjustmentRow = Selectable<SettlementTables['settlement_adjustments']>;
