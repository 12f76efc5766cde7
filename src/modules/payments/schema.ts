import { Type, type Static } from 'typebox';
import { NullableTimestamp, Timestamp } from '../../http/schemas.ts';
import type { PaymentStatus } from './tables.ts';

/** A payment and its legs as the API shows them: the response schemas, and the view types derived from them. */

export const PAYMENT_STATUSES: readonly PaymentStatus[] = [
  'created',
  'matching',
  'matched',
  'payment_pending',
  'confirming',
  'completed',
  'failed',
  'expired',
  'cancelled',
  'settled',
];

/**
 * A leg's slip: `checking` until its verdict, then `verified` or `rejected` (with the reason); `not_checked` when the
 * payment ended first (another leg's slip was rejected, or the payment expired), so this slip was never judged.
 */
export const LegProofSchema = Type.Object({
  id: Type.String(),
  status: Type.Union([
    Type.Literal('checking'),
    Type.Literal('verified'),
    Type.Literal('rejected'),
    Type.Literal('not_checked'),
  ]),
  reason: Type.Union([Type.String(), Type.Null()], {
    description: 'Why a rejected slip was rejected (e.g. duplicate_slip, amount_mismatch)',
  }),
  received_at: Timestamp,
});

export const MatchDetailSchema = Type.Object({
  seller_id: Type.String(),
  match_order: Type.Integer(),
  allocated_fiat_amount: Type.Integer({ description: 'Minor units' }),
  rate: Type.String({ description: 'Fiat major units per PAY' }),
  amount_micro_pay: Type.Integer(),
  proof: Type.Union([LegProofSchema, Type.Null()], {
    description: "This leg's slip and its verdict; null while the leg has none",
  }),
});

export const PaymentSchema = Type.Object(
  {
    id: Type.String(),
    merchant_id: Type.String(),
    order_id: Type.String(),
    amount: Type.Integer({ description: 'Minor units (satang, cents)' }),
    amount_decimal: Type.String(),
    currency: Type.String(),
    payment_method: Type.String(),
    return_url: Type.String(),
    checkout_url: Type.String(),
    status: Type.Unsafe<PaymentStatus>(Type.Union(PAYMENT_STATUSES.map((s) => Type.Literal(s)))),
    expires_at: Timestamp,
    is_sandbox: Type.Boolean(),
    created_at: Timestamp,
    matched_at: NullableTimestamp,
    completed_at: NullableTimestamp,
    failure_reason: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Record(Type.String(), Type.String()),
    quote_lock_id: Type.Union([Type.String(), Type.Null()]),
    payment_link_id: Type.Union([Type.String(), Type.Null()], {
      description: 'The payment link the buyer used, or null',
    }),
    receipt_number: Type.Union([Type.Integer(), Type.Null()], {
      description:
        'Set when the payment completes (or ends partly paid): sequential per merchant and mode, without gaps',
    }),
    receipt_url: Type.Union([Type.String(), Type.Null()], {
      description: "The receipt's printable page (Thai and English), behind an unguessable link; null until completed",
    }),
    fee_minor: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Settlement fee taken at completion, minor units (null before completion)',
    }),
    fee_micro_pay: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The same fee in PAY, as posted to the fees account (null before completion)',
    }),
    match_details: Type.Array(MatchDetailSchema),
    synthetic_match: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { $id: 'Payment' },
);

export type MatchDetail = Static<typeof MatchDetailSchema>;
export type LegProof = Static<typeof LegProofSchema>;
export type PaymentView = Static<typeof PaymentSchema>;

/** The proof upload's multipart fields, as the OpenAPI document shows them. */
export const PROOF_MULTIPART_BODY = {
  proof: {
    description:
      'One slip per leg, in match_order, starting at the first leg without a slip (JPEG, PNG, WebP or HEIC, at most PROOF_MAX_BYTES each; at most as many parts as legs)',
    repeated: true,
  },
  leg: {
    description: 'With one `proof` part: the leg (match_order) it pays, to send legs one at a time',
    integer: true,
    optional: true,
  },
};
