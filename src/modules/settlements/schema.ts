import { Type, type Static } from 'typebox';
import { NullableTimestamp, Timestamp } from '../../http/schemas.ts';

/** A settlement batch, its adjustments and its payments as the API shows them: the response schemas, and the view types derived from them. */

const Minor = (description: string) => Type.Integer({ description });

export const SettlementSchema = Type.Object(
  {
    id: Type.String(),
    merchant_id: Type.String(),
    is_sandbox: Type.Boolean(),
    currency: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('completed'), Type.Literal('failed')]),
    payment_count: Type.Integer(),
    fee_bps: Type.Integer({ description: 'Fee rate of this batch in basis points of each payment' }),
    gross_minor: Minor('Sum of the payments, minor units'),
    gross_decimal: Type.String(),
    fee_minor: Minor('Sum of the fees taken when each payment completed (each rounded down), minor units'),
    fee_decimal: Type.String(),
    fee_micro_pay: Type.Integer({
      description: 'The same fees in PAY, as the ledger took them into the fees account when each payment completed',
    }),
    adjustments_minor: Minor('Sum of operator adjustments (signed), minor units'),
    adjustments_decimal: Type.String(),
    net_minor: Minor('gross - fee + adjustments, minor units'),
    net_decimal: Type.String(),
    failure_reason: Type.Union([Type.String(), Type.Null()]),
    retry_count: Type.Integer(),
    created_at: Timestamp,
    completed_at: NullableTimestamp,
    failed_at: NullableTimestamp,
  },
  { $id: 'Settlement' },
);

export const AdjustmentSchema = Type.Object({
  id: Type.String(),
  amount_minor: Type.Integer(),
  amount_decimal: Type.String(),
  reason: Type.String(),
  created_at: Timestamp,
});
export const SettlementDetailSchema = Type.Object({
  ...SettlementSchema.properties,
  refunded_minor: Minor(
    "Succeeded refunds of the batch's payments so far, minor units (the payments' fees are not returned)",
  ),
  refunded_decimal: Type.String(),
  adjustments: Type.Array(AdjustmentSchema),
});

export const SettlementPaymentSchema = Type.Object({
  payment_id: Type.String(),
  order_id: Type.String(),
  currency: Type.String(),
  amount_minor: Type.Integer(),
  amount_decimal: Type.String(),
  fee_minor: Type.Integer(),
  fee_decimal: Type.String(),
  fee_micro_pay: Type.Integer({ description: 'The fee in PAY posted to the fees account at completion' }),
  net_minor: Type.Integer(),
  net_decimal: Type.String(),
  refunded_minor: Type.Integer({ description: "The payment's succeeded refunds so far, minor units" }),
  refunded_decimal: Type.String(),
  payment_created_at: Timestamp,
  completed_at: Timestamp,
});

export type SettlementView = Static<typeof SettlementSchema>;
export type AdjustmentView = Static<typeof AdjustmentSchema>;
export type SettlementPaymentView = Static<typeof SettlementPaymentSchema>;
