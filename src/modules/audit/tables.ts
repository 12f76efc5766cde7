import type { Selectable } from 'kysely';
import type { Json } from '../../db/schema.ts';

/** The audit module owns `admin_audit_log`: one append-only row per operator action (created in migration 0001, append-only through `db/append-only.ts`). */
export interface AuditTables {
  admin_audit_log: {
    id: string;
    actor_user_id: string;
    actor_role: string;
    action: string;
    target_type: string;
    target_id: string;
    details: Json<Record<string, unknown>>;
    created_at: Date;
  };
}

export type AdminAuditRow = Selectable<AuditTables['admin_audit_log']>;
