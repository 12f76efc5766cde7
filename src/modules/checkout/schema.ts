import { Type, type Static } from 'typebox';
import { Timestamp } from '../../http/schemas.ts';
import { LegProofSchema } from '../payments/schema.ts';

/** Who a leg is paid to, by payment method. The OpenAPI document shows it as an object with a `type` (see CheckoutLegSchema). */
export type CheckoutPayee =
  | { type: 'promptpay'; promptpay_id: string; display_name: string; qr_payload: string; qr_image_url: string }
  | { type: 'payid'; payid: string; display_name: string }
  | {
      type: 'bank_transfer';
      bank_code: string;
      bank_name: string | null;
      account_number: string;
      account_name: string;
      display_name: string;
    };

export const CheckoutLegSchema = Type.Object({
  match_order: Type.Integer(),
  amount: Type.Integer(),
  amount_decimal: Type.String(),
  payment_method: Type.String(),
  payee: Type.Unsafe<CheckoutPayee>(Type.Object({ type: Type.String() }, { additionalProperties: true })),
  proof: Type.Union([LegProofSchema, Type.Null()], {
    description: "This leg's slip and its verdict; null while the buyer has not sent it",
  }),
});

/** The checkout view-model as the API shows it (`GET /v1/payments/{id}/checkout`) and the hosted page renders it: the response schema, and its type. */
export const CheckoutSchema = Type.Object({
  payment_id: Type.String(),
  order_id: Type.String(),
  status: Type.String(),
  amount: Type.Integer(),
  amount_decimal: Type.String(),
  amount_received: Type.Integer({ description: 'Minor units that arrived (partially_paid: the verified legs)' }),
  amount_received_decimal: Type.String(),
  currency: Type.String(),
  payment_method: Type.String(),
  is_sandbox: Type.Boolean(),
  expires_at: Timestamp,
  seconds_remaining: Type.Integer(),
  checkout_url: Type.String(),
  proof_upload_url: Type.String(),
  return_url: Type.String(),
  return_redirect_url: Type.String(),
  failure_reason: Type.Union([Type.String(), Type.Null()]),
  legs: Type.Array(CheckoutLegSchema),
});

export type CheckoutLeg = Static<typeof CheckoutLegSchema>;
export type CheckoutView = Static<typeof CheckoutSchema>;
