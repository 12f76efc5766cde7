import { randomUUID } from 'node:crypto';
import type { Trx } from '../../db/database.ts';

export interface AdminActor {
  actor_user_id: string;
  actor_role: string;
}

/** One `admin_audit_log` row per operator action, written in the action's own transaction. */
export async function recordAdminAction(
  trx: Trx,
  at: Date,
  actor: AdminActor,
  action: { action: string; target_type: string; target_id: string; details: Record<string, unknown> },
): Promise<void> {
  await trx
    .insertInto('admin_audit_log')
    .values({ id: randomUUID(), ...actor, ...action, details: JSON.stringify(action.details), created_at: at })
    .execute();
}
