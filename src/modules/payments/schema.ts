import { Type, type Static } from 'typebox';
import { ListQuery, NullableTimestamp, Timestamp } from '../../http/schemas.ts';
import type { PaymentStatus } from './tables.ts';

/** A payment and its legs as the API shows them: the response schemas, and the view types derived from them. */

export const PAYMENT_STATUSES: readonly PaymentStatus[] = [
  'created',
  'matching',
  'matched',
  'payment_pending',
  'confirming',
  'completed',
  'partially_paid',
  'failed',
  'expired',
  'cancelled',
  'settled',
];

/**
 * A leg's slip: `checking` until its verdict, then `verified` or `rejected` (with the reason); `awaiting_payee` when
 * the checks it passed are not evidence for live money and the leg waits for its seller's confirmation (DESIGN 3b);
 * `not_checked` when the payment ended first (another leg's slip was rejected, or the payment expired), so this slip
 * was never judged.
 */
export const LegProofSchema = Type.Object({
  id: Type.String(),
  status: Type.Union([
    Type.Literal('checking'),
    Type.Literal('awaiting_payee'),
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
    amount_received: Type.Integer({
      description:
        "Minor units that arrived: the amount once completed, the verified legs' amount when partially_paid, 0 before",
    }),
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
    amount_refunded: Type.Integer({ description: 'What succeeded refunds gave back, minor units' }),
    refunded: Type.Boolean({
      description:
        'True when succeeded refunds add up to what the payment received (the whole amount of a completed payment)',
    }),
    match_details: Type.Array(MatchDetailSchema),
    synthetic_match: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { $id: 'Payment' },
);

/** A payment leg as its seller sees it (`GET /v1/seller/legs`, event `leg.awaiting_payee`): no merchant data. */
export const SellerLegSchema = Type.Object(
  {
    payment_id: Type.String(),
    match_order: Type.Integer(),
    seller_id: Type.String(),
    status: Type.Union(
      [
        Type.Literal('checking'),
        Type.Literal('awaiting_payee'),
        Type.Literal('verified'),
        Type.Literal('rejected'),
        Type.Literal('not_checked'),
      ],
      { description: "The leg's slip: awaiting_payee while it waits for this seller's confirmation" },
    ),
    amount_minor: Type.Integer({ description: 'What the buyer should have paid this seller, minor units' }),
    currency: Type.String(),
    amount_micro_pay: Type.Integer({ description: 'The PAY this seller gives the merchant when the leg completes' }),
    reference: Type.Union([Type.String(), Type.Null()], {
      description: "The slip's bank reference (from its slip-verification QR or the provider), when it has one",
    }),
    sending_bank: Type.Union([Type.String(), Type.Null()]),
    image_url: Type.String({ description: 'The slip image; the seller key fetches it' }),
    received_at: Timestamp,
    awaiting_payee_since: NullableTimestamp,
    reason: Type.Union([Type.String(), Type.Null()], { description: 'Why a rejected leg was rejected' }),
    decided_by: Type.Union([Type.Literal('seller'), Type.Literal('operator'), Type.Null()]),
  },
  { $id: 'SellerLeg' },
);
export type SellerLegView = Static<typeof SellerLegSchema>;

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

/** The query of a list of legs that carry a slip (a seller's own, or every seller's for an operator). */
export const SellerLegsQuery = ListQuery({
  status: Type.Optional(
    Type.Union(
      ['awaiting_payee', 'checking', 'verified', 'rejected', 'not_checked'].map((s) => Type.Literal(s)),
      { description: "The leg's slip state" },
    ),
  ),
});
