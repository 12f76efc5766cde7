import { Type, type Static } from 'typebox';
import { NullableTimestamp, Timestamp } from '../../http/schemas.ts';
import { PayoutDestinationInput } from '../reference/payout-destinations.ts';
import type { RefundFunding, RefundReason, RefundStatus } from './tables.ts';

/** A refund as the API shows it, and the bodies its routes take. */

export const REFUND_STATUSES: readonly RefundStatus[] = [
  'requires_action',
  'pending',
  'succeeded',
  'failed',
  'canceled',
];
export const REFUND_REASONS: readonly RefundReason[] = [
  'duplicate',
  'fraudulent',
  'requested_by_customer',
  'partial_delivery',
];
export const REFUND_FUNDINGS: readonly RefundFunding[] = ['merchant_transfer', 'pay_balance'];

const literals = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>(
    Type.Union(
      values.map((value) => Type.Literal(value)),
      description ? { description } : {},
    ),
  );

export const DestinationDetailsSchema = Type.Object(
  {
    rail: Type.Union([
      Type.Literal('promptpay'),
      Type.Literal('thai_bank'),
      Type.Literal('payid'),
      Type.Literal('au_bank'),
    ]),
    masked: Type.String({
      description:
        "The number's last 4 digits (xxxxxx5678), or an email PayID's first letter and domain (j***@example.com)",
    }),
    bank_code: Type.Optional(Type.String({ description: 'thai_bank: 3-digit Bank of Thailand code' })),
    bank_name: Type.Optional(Type.String({ description: 'thai_bank: the bank, from the directory' })),
  },
  { description: "Where the refund goes, masked; null while the buyer's destination is not known" },
);

export const RefundProofStateSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    status: Type.Union([Type.Literal('verified'), Type.Literal('awaiting_buyer'), Type.Literal('rejected')], {
      description:
        'verified: a provider checked amount, payee and reference; awaiting_buyer: nobody could check it, the buyer confirms on the claim page (silence for REFUND_CONFIRM_DAYS stands); rejected: see reason',
    }),
    reason: Type.Union([Type.String(), Type.Null()]),
    reference: Type.Union([Type.String(), Type.Null()], { description: "The slip's bank reference, when read" }),
    received_at: Timestamp,
  },
  { description: 'The latest slip the merchant showed for this refund' },
);

export const RefundSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    merchant_id: Type.String(),
    payment_id: Type.String(),
    amount: Type.Integer({ description: "Minor units of the payment's currency" }),
    amount_decimal: Type.String(),
    currency: Type.String(),
    status: literals(REFUND_STATUSES),
    reason: Type.Union([literals(REFUND_REASONS), Type.Null()]),
    funding: literals(REFUND_FUNDINGS),
    destination_details: Type.Union([DestinationDetailsSchema, Type.Null()]),
    next_action: Type.Union(
      [
        Type.Object({
          type: Type.Literal('claim'),
          claim_url: Type.String({
            description: 'Send this to the buyer: the page where they say where the money goes',
          }),
          expires_at: Timestamp,
        }),
        Type.Null(),
      ],
      { description: "While `requires_action`: the claim link for the buyer's destination" },
    ),
    claim_url: Type.String({
      description: "The buyer's page for this refund: the destination while unclaimed, then whether the money arrived",
    }),
    failure_reason: Type.Union([Type.String(), Type.Null()], {
      description:
        'Why the refund failed or was canceled (claim_expired, ...), or why its last slip was not accepted (amount_mismatch, duplicate_slip, buyer_not_received, ...)',
    }),
    proof: Type.Union([RefundProofStateSchema, Type.Null()]),
    amount_micro_pay: Type.Union([Type.Integer(), Type.Null()], {
      description: 'pay_balance: the PAY held for this refund (null for merchant_transfer)',
    }),
    sell_order_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description: 'pay_balance: the sell order that pays the buyer, once the destination is known',
    }),
    receipt_url: Type.Union([Type.String(), Type.Null()], { description: 'The receipt of a succeeded refund' }),
    metadata: Type.Record(Type.String(), Type.String()),
    is_sandbox: Type.Boolean(),
    created_at: Timestamp,
    succeeded_at: NullableTimestamp,
    failed_at: NullableTimestamp,
    canceled_at: NullableTimestamp,
  },
  { $id: 'Refund' },
);
export type RefundView = Static<typeof RefundSchema>;

export const Amount = Type.Union(
  [Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), Type.String({ pattern: '^\\d{1,15}(\\.\\d+)?$' })],
  {
    description:
      'Integer minor units (10000 = 100.00 THB) or a decimal string in major units ("100.00"); default: what remains to refund',
  },
);

export const CreateRefundBody = Type.Object(
  {
    amount: Type.Optional(Amount),
    reason: Type.Optional(literals(REFUND_REASONS)),
    destination: Type.Optional(PayoutDestinationInput),
    funding: Type.Optional(
      literals(
        REFUND_FUNDINGS,
        "merchant_transfer (default): you pay the buyer from your bank and upload the slip; pay_balance: the refund's PAY is held and paid out through the payout network",
      ),
    ),
    metadata: Type.Optional(
      Type.Record(Type.String({ maxLength: 40 }), Type.String({ maxLength: 500 }), { maxProperties: 50 }),
    ),
  },
  { additionalProperties: false },
);
export type CreateRefundInput = Static<typeof CreateRefundBody>;

export const RefundProofBody = Type.Object(
  {
    receipt_base64: Type.String({ minLength: 1, description: 'The slip, base64 (decoded at most 5 MB)' }),
    content_type: Type.String({ description: 'image/jpeg, image/png, image/webp or application/pdf' }),
  },
  { additionalProperties: false },
);
