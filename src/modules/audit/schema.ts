import { Type, type Static } from 'typebox';
import { Timestamp } from '../../http/schemas.ts';

/** An operator action as the API shows it (`GET /admin/.../audit-log`): the response schema, and its type. */
export const AdminActionSchema = Type.Object({
  id: Type.String(),
  action: Type.String(),
  actor_user_id: Type.String(),
  actor_role: Type.String(),
  details: Type.Object({}, { additionalProperties: true }),
  created_at: Timestamp,
  archived: Type.Boolean({
    description:
      'True once the audit-archival job copied the entry to the archive (older than 90 days); the entry is never removed',
  }),
  archived_at: Type.Union([Timestamp, Type.Null()], {
    description: 'When the audit-archival job archived the entry (older than 90 days); null for a live entry',
  }),
});

export type AdminActionView = Static<typeof AdminActionSchema>;
