import { Type, type Static } from 'typebox';
import { NullableTimestamp, Timestamp } from '../../http/schemas.ts';

/** A buy order as the API shows it: the response schema, and the view type derived from it. */
export const BuyOrderSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  merchant_id: Type.String(),
  is_sandbox: Type.Boolean(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('matched'), Type.Literal('cancelled'), Type.Literal('expired')]),
  amount_micro_pay: Type.Integer({ description: 'PAY to acquire, in micro-PAY; minted to your available account on match' }),
  fiat_currency: Type.String(),
  fiat_amount: Type.Integer({ description: 'Fiat locked against the PAY, in minor units; fiat_amount / amount_micro_pay is the highest price this order pays' }),
  filled_micro_pay: Type.Integer({ description: 'PAY filled so far (minted to you); `pending` while below amount_micro_pay, `matched` when equal' }),
  filled_fiat_amount: Type.Integer({ description: 'Fiat owed for the filled part, at the sell orders\' prices (at or below yours)' }),
  expires_at: Timestamp,
  matched_sell_order_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  mint_transfer_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
  matched_at: NullableTimestamp,
  cancelled_at: NullableTimestamp,
  expired_at: NullableTimestamp,
});

export type BuyOrderView = Static<typeof BuyOrderSchema>;
