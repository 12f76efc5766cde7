import { iso } from '../../http/schemas.ts';
import type { ValidatorOutcome } from '../validators/port.ts';
import type { SellOrderFailureReason, SellOrderRow } from './tables.ts';

export interface SellOrderView {
  id: string;
  merchant_id: string;
  is_sandbox: boolean;
  status: string;
  amount_micro_pay: number;
  currency: 'PAY';
  target_currency: string;
  target_fiat_amount: number;
  filled_micro_pay: number;
  filled_fiat_amount: number;
  expires_at: string;
  matched_buy_order_id: string | null;
  cash_leg_attempts: number;
  last_cash_leg_attempt_at: string | null;
  last_cash_leg_outcome: ValidatorOutcome | null;
  failure_reason: SellOrderFailureReason | null;
  created_at: string;
  matched_at: string | null;
  cash_leg_requested_at: string | null;
  completed_at: string | null;
  failed_at: string | null;
}

export function presentSellOrder(row: SellOrderRow): SellOrderView {
  return {
    id: row.id,
    merchant_id: row.merchant_id,
    is_sandbox: row.is_sandbox,
    status: row.status,
    amount_micro_pay: row.amount_micro_pay,
    currency: 'PAY',
    target_currency: row.target_currency,
    target_fiat_amount: row.target_fiat_amount,
    filled_micro_pay: row.filled_micro_pay,
    filled_fiat_amount: row.filled_fiat_amount,
    expires_at: iso(row.expires_at),
    matched_buy_order_id: row.matched_buy_order_id,
    cash_leg_attempts: row.cash_leg_attempts,
    last_cash_leg_attempt_at: iso(row.last_cash_leg_attempt_at),
    last_cash_leg_outcome: row.last_cash_leg_outcome,
    failure_reason: row.failure_reason,
    created_at: iso(row.created_at),
    matched_at: iso(row.matched_at),
    cash_leg_requested_at: iso(row.cash_leg_requested_at),
    completed_at: iso(row.completed_at),
    failed_at: iso(row.failed_at),
  };
}
