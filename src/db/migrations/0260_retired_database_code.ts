import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Database code with no SQL file is dropped where an earlier start created it: the row-level append-only triggers of
 * `ledger_transfers` and `receiver_confirm_audit` (the statement-level guard of every append-only table, made by
 * `mpay_append_only`, refuses the same writes) and the per-table archive hand-over functions (the archive move reads
 * its source itself: src/modules/archival/sql/mpay_archive_move.sql).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    drop trigger if exists ledger_transfers_append_only on ledger_transfers;
    drop function if exists ledger_transfers_append_only();
    drop trigger if exists receiver_confirm_audit_append_only on receiver_confirm_audit;
    drop trigger if exists receiver_confirm_audit_no_truncate on receiver_confirm_audit;
    drop function if exists receiver_confirm_audit_append_only();
    drop function if exists mpay_archive_take_admin_audit_log(timestamptz, integer);
    drop function if exists mpay_archive_take_receiver_confirm_audit(timestamptz, integer);
  `,
  );
}
