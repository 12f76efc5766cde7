import type { Selectable } from 'kysely';
import type { AuditTables } from '../audit/tables.ts';
import type { PendingFundsTables } from '../pending-funds/tables.ts';

/** The cold archive (migration 0151): the audit tables' columns plus when the row was moved. Append-only. */
export interface ArchiveTables {
  receiver_confirm_audit_archive: PendingFundsTables['receiver_confirm_audit'] & { archived_at: Date };
  admin_audit_log_archive: AuditTables['admin_audit_log'] & { archived_at: Date };
}

export type ArchivedAuditRow = Selectable<ArchiveTables['receiver_confirm_audit_archive']>;
