export interface BalanceTables {
  merchant_balance_state: {
    merchant_id: string;
    is_sandbox: boolean;
    buffer_threshold_micro_pay: number;
    trailing_30d_volume_micro_pay: number;
    buffer_last_recalc_at: Date | null;
    deficit_since: Date | null;
  };
}
