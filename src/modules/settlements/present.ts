import { iso } from '../../http/schemas.ts';
import { minorToDecimal, type Currency } from '../../lib/money.ts';
import type { AdjustmentView, SettlementPaymentView, SettlementView } from './schema.ts';
import type { SettlementAdjustmentRow, SettlementItemRow, SettlementRow } from './tables.ts';

export type { AdjustmentView, SettlementPaymentView, SettlementView } from './schema.ts';

const decimal = (minor: number, currency: string) => minorToDecimal(minor, currency as Currency);

export function presentSettlement(row: SettlementRow): SettlementView {
  return {
    id: row.id,
    merchant_id: row.merchant_id,
    is_sandbox: row.is_sandbox,
    currency: row.currency,
    status: row.status,
    payment_count: row.payment_count,
    fee_bps: row.fee_bps,
    gross_minor: row.gross_minor,
    gross_decimal: decimal(row.gross_minor, row.currency),
    fee_minor: row.fee_minor,
    fee_decimal: decimal(row.fee_minor, row.currency),
    fee_micro_pay: row.fee_micro_pay,
    adjustments_minor: row.adjustments_minor,
    adjustments_decimal: decimal(row.adjustments_minor, row.currency),
    net_minor: row.net_minor,
    net_decimal: decimal(row.net_minor, row.currency),
    failure_reason: row.failure_reason,
    retry_count: row.retry_count,
    created_at: iso(row.created_at),
    completed_at: iso(row.completed_at),
    failed_at: iso(row.failed_at),
  };
}

export function presentAdjustment(row: SettlementAdjustmentRow, currency: string): AdjustmentView {
  return {
    id: row.id,
    amount_minor: row.amount_minor,
    amount_decimal: decimal(row.amount_minor, currency),
    reason: row.reason,
    created_at: iso(row.created_at),
  };
}

export function presentItem(row: SettlementItemRow, currency: string, refunded_minor: number): SettlementPaymentView {
  return {
    payment_id: row.payment_id,
    order_id: row.order_id,
    currency,
    amount_minor: row.amount_minor,
    amount_decimal: decimal(row.amount_minor, currency),
    fee_minor: row.fee_minor,
    fee_decimal: decimal(row.fee_minor, currency),
    fee_micro_pay: row.fee_micro_pay,
    net_minor: row.net_minor,
    net_decimal: decimal(row.net_minor, currency),
    refunded_minor,
    refunded_decimal: decimal(refunded_minor, currency),
    payment_created_at: iso(row.payment_created_at),
    completed_at: iso(row.completed_at),
  };
}

export const CSV_COLUMNS = [
  'payment_id',
  'order_id',
  'currency',
  'amount_minor',
  'amount',
  'fee_minor',
  'fee',
  'net_minor',
  'net',
  'payment_created_at',
  'completed_at',
  'fee_micro_pay',
  'refunded_minor',
  'refunded',
] as const;

/**
 * RFC 4180 quoting, plus a leading `'` on cells a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR):
 * `order_id` is merchant-supplied text and the file is meant to be opened in Excel (OWASP CSV injection).
 */
export function csvCell(value: string | number): string {
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(item: SettlementPaymentView): string {
  return [
    item.payment_id,
    item.order_id,
    item.currency,
    item.amount_minor,
    item.amount_decimal,
    item.fee_minor,
    item.fee_decimal,
    item.net_minor,
    item.net_decimal,
    item.payment_created_at,
    item.completed_at,
    item.fee_micro_pay,
    item.refunded_minor,
    item.refunded_decimal,
  ]
    .map(csvCell)
    .join(',');
}
