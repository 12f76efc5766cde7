import { Type, type Static } from 'typebox';
import { Timestamp } from '../../http/schemas.ts';

/** A dashboard user as the operator API shows it (`POST /admin/merchants/{id}/users`): the response schemas, and their types. */

export const Role = Type.Union([
  Type.Literal('owner'),
  Type.Literal('developer'),
  Type.Literal('finance'),
  Type.Literal('viewer'),
]);

export const MerchantUserSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  merchant_id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  role: Role,
  status: Type.Union([Type.Literal('invited'), Type.Literal('active')]),
  created_at: Timestamp,
});

export const InvitedUserSchema = Type.Object({
  user: MerchantUserSchema,
  invitation_url: Type.String(),
  invitation_expires_at: Timestamp,
});

export type MerchantUserView = Static<typeof MerchantUserSchema>;
export type InvitedUser = Static<typeof InvitedUserSchema>;
