import { sql, type Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Contract section 8 (DESIGN "Storage"): audit rows older than 90 days go to cold archive tables that stay
 * append-only and readable; the move is src/modules/archival/sql/mpay_archive_move.sql.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table receiver_confirm_audit_archive (like receiver_confirm_audit including defaults);
    alter table receiver_confirm_audit_archive add column archived_at timestamptz not null;
    alter table receiver_confirm_audit_archive add primary key (id);
    create index receiver_confirm_audit_archive_list on receiver_confirm_audit_archive (created_at desc, id desc);
    create index receiver_confirm_audit_archive_row on receiver_confirm_audit_archive (pending_funds_id, created_at desc, id desc);

    create table admin_audit_log_archive (like admin_audit_log including defaults);
    alter table admin_audit_log_archive add column archived_at timestamptz not null;
    alter table admin_audit_log_archive add primary key (id);
    create index admin_audit_log_archive_target on admin_audit_log_archive (target_type, target_id, created_at);
    -- The oldest-first scan of the move (receiver_confirm_audit_list already serves receiver_confirm_audit backwards).
    create index admin_audit_log_created on admin_audit_log (created_at, id);
  `,
  );
  await sql`select mpay_append_only('receiver_confirm_audit_archive')`.execute(db);
  await sql`select mpay_append_only('admin_audit_log_archive')`.execute(db);
}
