import { Type, type Static } from 'typebox';
import { Timestamp } from '../../http/schemas.ts';

/** Reference prices and quote locks as the API shows them: the response schemas, and their types. */

export const ReferencePriceSchema = Type.Object({
  base: Type.String(),
  quote: Type.String(),
  price: Type.String(),
  updated_at: Timestamp,
});

export const QuoteLockSchema = Type.Object({
  id: Type.String(),
  base: Type.String(),
  quote: Type.String(),
  currency: Type.String({ description: 'The trade currency this lock is for (= quote)' }),
  rate: Type.String({
    description: 'Locked price: fiat major units per 1 PAY; a trade with this lock uses it for every leg',
  }),
  status: Type.Union([Type.Literal('active'), Type.Literal('used'), Type.Literal('expired')]),
  is_sandbox: Type.Boolean(),
  expires_at: Timestamp,
  created_at: Timestamp,
  used_at: Type.Union([Timestamp, Type.Null()]),
  payment_id: Type.Union([Type.String(), Type.Null()], { description: 'The trade that used the lock' }),
});

export type ReferencePriceView = Static<typeof ReferencePriceSchema>;
export type QuoteLockView = Static<typeof QuoteLockSchema>;
export type QuoteLockStatus = QuoteLockView['status'];
