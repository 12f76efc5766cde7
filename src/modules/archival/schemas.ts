import { Type } from 'typebox';

/** `?include_archived=true` on an admin route that reads an archived audit table (rows older than 90 days). */
export const IncludeArchived = Type.Optional(
  Type.Boolean({ default: false, description: 'Also read the cold archive: audit rows older than 90 days, moved there by the audit-archival job (`archived_at` set)' }),
);
