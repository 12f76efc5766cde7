import { Type, type Static } from 'typebox';
import type { Trx } from '../../db/database.ts';
import { NullableTimestamp, Timestamp, viewOf } from '../../http/schemas.ts';
import { eventAbout, recordEvent } from '../events/outbox.ts';
import { PayoutDestinationSchema } from '../reference/payout-destinations.ts';
import { SELL_ORDER_STATUSES } from './state.ts';
import type { SellOrderRow } from './tables.ts';

/** A sell order as the API shows it: the response schema, and its type. */
export const SellOrderSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  merchant_id: Type.String(),
  is_sandbox: Type.Boolean(),
  status: Type.String({
    enum: [...SELL_ORDER_STATUSES],
    description: 'pending, matched, cash_leg_in_flight, completed or failed',
  }),
  amount_micro_pay: Type.Integer({
    description: 'PAY sold, in micro-PAY (reserved on creation, burned on completion)',
  }),
  currency: Type.Literal('PAY'),
  target_currency: Type.String({ description: 'Fiat the buyers pay you in' }),
  target_fiat_amount: Type.Integer({
    description: 'Fiat the buyers pay you for the whole amount, in minor units of target_currency (your asking price)',
  }),
  filled_micro_pay: Type.Integer({
    description: 'PAY of this order filled by buy orders so far; `matched` once it equals amount_micro_pay',
  }),
  filled_fiat_amount: Type.Integer({
    description: "Fiat of the filled part at this order's price (target_fiat_amount per PAY): what the buyers owe you",
  }),
  expires_at: Timestamp,
  payout_destination: Type.Union([PayoutDestinationSchema, Type.Null()], {
    description: 'Where the buyers pay you for this PAY',
  }),
  matched_buy_order_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  cash_leg_attempts: Type.Integer(),
  last_cash_leg_attempt_at: NullableTimestamp,
  last_cash_leg_outcome: Type.Union([
    Type.Literal('verified'),
    Type.Literal('failed'),
    Type.Literal('unverified'),
    Type.Literal('timeout'),
    Type.Null(),
  ]),
  failure_reason: Type.Union([
    Type.Literal('expired_unmatched'),
    Type.Literal('cash_leg_retry_exhausted'),
    Type.Literal('cash_leg_disputed'),
    Type.Literal('cancelled_by_merchant'),
    Type.Null(),
  ]),
  created_at: Timestamp,
  matched_at: NullableTimestamp,
  cash_leg_requested_at: NullableTimestamp,
  completed_at: NullableTimestamp,
  failed_at: NullableTimestamp,
});

export type SellOrderView = Static<typeof SellOrderSchema>;

export function presentSellOrder(row: SellOrderRow): SellOrderView {
  return viewOf(SellOrderSchema, row);
}

/** Records a sell-order event in the caller's transaction: the order as the API shows it, with `extra` beside it. */
export async function emitSellOrderEvent(
  trx: Trx,
  at: Date,
  order: SellOrderRow,
  type: string,
  extra: Record<string, unknown> = {},
): Promise<SellOrderView> {
  const view = presentSellOrder(order);
  await recordEvent(trx, at, { ...eventAbout('sell_order', order), type, data: { ...view, ...extra } });
  return view;
}
