import { Type, type Static } from 'typebox';
import { NullableTimestamp, Timestamp } from '../../http/schemas.ts';
import { CURRENCIES, type Currency } from '../../lib/money.ts';

/** A payment link as the API shows it, and what a create takes. */

export const LINK_STATES = ['open', 'used_up', 'expired', 'inactive'] as const;
export type LinkState = (typeof LINK_STATES)[number];

export const PaymentLinkSchema = Type.Object(
  {
    id: Type.String({ description: 'plink_ + 32 hex digits' }),
    url: Type.String({ description: 'The public page to share: <PUBLIC_BASE_URL>/pay/<id>' }),
    title: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    currency: Type.String(),
    amount: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The fixed amount in minor units, or null when the payer types it within `amount_range`',
    }),
    amount_decimal: Type.Union([Type.String(), Type.Null()]),
    amount_range: Type.Union(
      [
        Type.Object({
          min: Type.Integer({ description: 'Minor units' }),
          max: Type.Integer({ description: 'Minor units' }),
          min_decimal: Type.String(),
          max_decimal: Type.String(),
        }),
        Type.Null(),
      ],
      { description: 'The range a payer-chosen amount must fall in (null for a fixed amount)' },
    ),
    reusable: Type.Boolean({ description: 'False: the first completed payment uses the link up' }),
    max_payments: Type.Union([Type.Integer(), Type.Null()], {
      description: 'A reusable link is used up after this many completed payments (null: no limit)',
    }),
    payments_completed: Type.Integer({ description: 'Completed payments made from this link' }),
    active: Type.Boolean({ description: 'False once deactivated (a link is never deleted)' }),
    state: Type.Unsafe<LinkState>(
      Type.Union(
        LINK_STATES.map((state) => Type.Literal(state)),
        {
          description:
            'open: its page takes payments; used_up: its completed payments reached its limit; expired: past expires_at; inactive: deactivated',
        },
      ),
    ),
    expires_at: NullableTimestamp,
    return_url: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Record(Type.String(), Type.String()),
    is_sandbox: Type.Boolean(),
    created_at: Timestamp,
    deactivated_at: NullableTimestamp,
  },
  { $id: 'PaymentLink' },
);
export type PaymentLinkView = Static<typeof PaymentLinkSchema>;

const Amount = (description: string) =>
  Type.Union(
    [Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), Type.String({ pattern: '^\\d{1,15}(\\.\\d+)?$' })],
    { description },
  );

export const CreatePaymentLinkBody = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 120, description: 'What the payer sees as the heading' }),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    currency: Type.Unsafe<Currency>(Type.Union(CURRENCIES.map((currency) => Type.Literal(currency)))),
    amount: Type.Optional(
      Amount(
        'A fixed amount: integer minor units (10000 = 100.00 THB) or a decimal string in major units ("100.00"). Give this or amount_range',
      ),
    ),
    amount_range: Type.Optional(
      Type.Object(
        {
          min: Amount('Smallest amount the payer may type (minor units or a decimal string)'),
          max: Amount('Largest amount the payer may type (minor units or a decimal string)'),
        },
        { additionalProperties: false },
      ),
    ),
    reusable: Type.Optional(Type.Boolean({ default: undefined, description: 'Default false: single use' })),
    max_payments: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Only with reusable: true' }),
    ),
    expires_at: Type.Optional(Type.String({ format: 'date-time', description: 'In the future' })),
    return_url: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 })),
    metadata: Type.Optional(
      Type.Record(Type.String({ maxLength: 40 }), Type.String({ maxLength: 500 }), { maxProperties: 50 }),
    ),
  },
  { additionalProperties: false },
);
export type CreatePaymentLinkInput = Static<typeof CreatePaymentLinkBody>;
