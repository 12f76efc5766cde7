import { randomUUID } from 'node:crypto';
import type { Executor, Trx } from '../../db/database.ts';
import { listPage, type PageQuery } from '../../http/pagination.ts';
import type { AdminActionView } from './schema.ts';
import type { AdminAuditRow } from './tables.ts';

/** The operator behind an admin request (`X-Actor-User-Id`, `X-Actor-Role`). */
export interface AdminActor {
  actor_user_id: string;
  actor_role: string;
}

export interface AdminAction {
  at: Date;
  actor: AdminActor;
  /** Dotted name of what was done: `settlement.fail`, `dispute.resolved`, `ledger.adjustment.credit`. */
  action: string;
  target_type: string;
  target_id: string;
  details: Record<string, unknown>;
}

/** The one writer of `admin_audit_log`: one row per operator action, in the action's own transaction. */
export async function recordAdminAction(trx: Trx, entry: AdminAction): Promise<void> {
  await trx
    .insertInto('admin_audit_log')
    .values({
      id: randomUUID(),
      actor_user_id: entry.actor.actor_user_id,
      actor_role: entry.actor.actor_role,
      action: entry.action,
      target_type: entry.target_type,
      target_id: entry.target_id,
      details: JSON.stringify(entry.details),
      created_at: entry.at,
    })
    .execute();
}

const present = (row: AdminAuditRow & { archived_at?: Date | null }): AdminActionView => ({
  id: row.id,
  action: row.action,
  actor_user_id: row.actor_user_id,
  actor_role: row.actor_role,
  details: row.details,
  created_at: row.created_at.toISOString(),
  archived: row.archived_at != null,
  archived_at: row.archived_at?.toISOString() ?? null,
});

/** The one reader: operator actions on one target, newest first, a keyset page; with `include_archived`, the archive's too. */
export async function listAdminActions(
  executor: Executor,
  target: { target_type: string; target_id: string },
  query: PageQuery & { include_archived?: boolean | undefined },
) {
  // The archive has the same columns plus archived_at, which selectAll() returns too.
  const from = (table: 'admin_audit_log' | 'admin_audit_log_archive') => {
    const rows = executor
      .selectFrom(table as 'admin_audit_log')
      .selectAll()
      .where('target_type', '=', target.target_type)
      .where('target_id', '=', target.target_id);
    // An archived entry stays in its table beside its archive copy: it is listed once, from the archive.
    return table === 'admin_audit_log_archive'
      ? rows
      : rows.where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('admin_audit_log_archive as copy')
                .select('copy.id')
                .whereRef('copy.id', '=', 'admin_audit_log.id'),
            ),
          ),
        );
  };
  return listPage(
    query.include_archived ? [from('admin_audit_log'), from('admin_audit_log_archive')] : from('admin_audit_log'),
    query,
    present,
  );
}

/** Every operator action of some kinds, archived ones included (reconciliation matches them to ledger transfers). */
export async function adminActionsOf(
  executor: Executor,
  actions: readonly string[],
): Promise<{ id: string; action: string; target_id: string; details: Record<string, unknown> }[]> {
  const from = (table: 'admin_audit_log' | 'admin_audit_log_archive') =>
    executor
      .selectFrom(table)
      .select(['id', 'action', 'target_id', 'details'])
      .where('action', 'in', [...actions])
      .execute();
  // an entry archived keeps its row; one archived before archival stopped deleting is in the archive only
  const rows = [
    ...new Map(
      [...(await from('admin_audit_log_archive')), ...(await from('admin_audit_log'))].map((row) => [row.id, row]),
    ).values(),
  ];
  return rows.map((row) => ({
    ...row,
    details: (typeof row.details === 'string' ? JSON.parse(row.details) : row.details) as Record<string, unknown>,
  }));
}
