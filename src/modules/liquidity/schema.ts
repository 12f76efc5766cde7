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

/** `POST /admin/sellers`'s answer: the seller and its key, shown only here. */
export const CreatedSellerSchema = Type.Object({
  ...SellerSchema.properties,
  seller_key: Type.String({
    description:
      "The seller's own key (sel_live_…), shown only here: the seller lists, confirms and rejects the legs that wait for it with it (/v1/seller/legs)",
  }),
});

export const SellerKeySchema = Type.Object({
  seller_id: Type.String(),
  seller_key: Type.String({ description: 'The new seller key, shown only here; the old one no longer works' }),
  key_hint: Type.String(),
  created_at: Timestamp,
});
