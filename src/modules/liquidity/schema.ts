import { Type, type Static } from 'typebox';
import { Timestamp } from '../../http/schemas.ts';

/** A seller offer as the API shows it (`POST /admin/sellers`): the response schema, and its type. */
export const SellerSchema = Type.Object({
  id: Type.String(),
  display_name: Type.String(),
  currency: Type.String(),
  payment_method: Type.String(),
  rate: Type.String(),
  liquidity_minor: Type.Integer(),
  reserved_minor: Type.Integer(),
  payee: Type.Object({}, { additionalProperties: true }),
  is_sandbox: Type.Boolean(),
  active: Type.Boolean({ description: 'False while out of matching (suspended)' }),
  suspended_at: Type.Union([Timestamp, Type.Null()], {
    description: 'When a refused completion took the seller out of matching',
  }),
  suspension_reason: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
});

export type SellerView = Static<typeof SellerSchema>;
