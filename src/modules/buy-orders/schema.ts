import { Type, type Static } from 'typebox';
import { NullableTimestamp, Timestamp } from '../../http/schemas.ts';
import { PayoutDestinationSchema } from '../reference/payout-destinations.ts';

/** One fill of a buy order, as the buyer's payment instruction: whom to pay, how much, with which reference. */
export const BuyOrderFillSchema = Type.Object({
  number: Type.Integer({ minimum: 1, description: "1, 2, … in the order the fills were made (the QR route's `n`)" }),
  sell_order_id: Type.String({ format: 'uuid' }),
  amount_micro_pay: Type.Integer({ description: 'PAY this fill minted to you' }),
  fiat_currency: Type.String(),
  fiat_amount: Type.Integer({ description: 'What you pay the seller for this fill, in minor units of fiat_currency' }),
  reference: Type.String({ description: 'Put this on your transfer, so the seller can match it to this fill' }),
  pay_to: Type.Union(
    [
      Type.Object({ display_name: Type.String({ description: 'The seller' }), destination: PayoutDestinationSchema }),
      Type.Null(),
    ],
    {
      description:
        "Whom you pay: the seller's payout destination (null only on fills made before destinations existed)",
    },
  ),
  promptpay_payload: Type.Union([Type.String(), Type.Null()], {
    description: 'PromptPay rail: the EMVCo payload of a QR for exactly fiat_amount; otherwise null',
  }),
  qr_url: Type.Union([Type.String(), Type.Null()], {
    description: 'PromptPay rail: path of that QR as a PNG; otherwise null',
  }),
  created_at: Timestamp,
});

export type BuyOrderFillView = Static<typeof BuyOrderFillSchema>;

/** A buy order as the API shows it: the response schema, and the view type derived from it. */
export const BuyOrderSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  merchant_id: Type.String(),
  is_sandbox: Type.Boolean(),
  status: Type.Union([
    Type.Literal('pending'),
    Type.Literal('matched'),
    Type.Literal('cancelled'),
    Type.Literal('expired'),
  ]),
  amount_micro_pay: Type.Integer({
    description: 'PAY to acquire, in micro-PAY; minted to your available account on match',
  }),
  fiat_currency: Type.String(),
  fiat_amount: Type.Integer({
    description:
      'Fiat locked against the PAY, in minor units; fiat_amount / amount_micro_pay is the highest price this order pays',
  }),
  filled_micro_pay: Type.Integer({
    description: 'PAY filled so far (minted to you); `pending` while below amount_micro_pay, `matched` when equal',
  }),
  filled_fiat_amount: Type.Integer({
    description: 'Fiat you owe the sellers for the filled part, at their prices (at or below yours)',
  }),
  fills: Type.Array(BuyOrderFillSchema, {
    description: 'One payment instruction per fill: pay each seller its fiat_amount, off-platform, with the reference',
  }),
  expires_at: Timestamp,
  matched_sell_order_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  mint_transfer_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
  matched_at: NullableTimestamp,
  cancelled_at: NullableTimestamp,
  expired_at: NullableTimestamp,
});

export type BuyOrderView = Static<typeof BuyOrderSchema>;
