import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';

/** The audit tables whose rows older than ARCHIVE_AFTER_DAYS are copied to `<table>_archive` (contract section 8). */
export const ARCHIVED_TABLES = ['receiver_confirm_audit', 'admin_audit_log'] as const;
export type ArchivedTable = (typeof ARCHIVED_TABLES)[number];
/** Fixed by the contract; the database function applies it (archival/sql/mpay_archive_move.sql). */
export const ARCHIVE_AFTER_DAYS = 90;
export const ARCHIVE_BATCH = 500;
/** Batches per table and pass: a pass stays short; the scheduler runs the job again at once while it moves rows. */
export const ARCHIVE_MAX_BATCHES_PER_PASS = 20;

export interface ArchivalDeps {
  db: Db;
  clock: Clock;
  logger?: Logger | undefined;
}

/** One batch: the rows of `table` created more than 90 days before the clock's now and not yet archived, copied to the archive (nothing is deleted). */
export async function archiveBatch(db: Db, table: ArchivedTable, as_of: Date, batch = ARCHIVE_BATCH): Promise<number> {
  const result = await sql<{ moved: number }>`select mpay_archive_move(${table}, ${as_of}, ${batch}) as moved`.execute(
    db,
  );
  return Number(result.rows[0]?.moved ?? 0);
}

/**
 * Worker pass (`audit-archival`): copies audit rows older than 90 days to their archive tables in batches, each batch
 * its own transaction through the privileged database function; the rows stay in their tables (no DELETE, DESIGN 2).
 * Idempotent: a row with a copy is not taken again, so a second pass finds nothing; concurrent passes skip each
 * other's locked rows. Returns how many rows were archived.
 */
export async function archiveOldAuditRows(deps: ArchivalDeps, batch = ARCHIVE_BATCH): Promise<number> {
  const as_of = deps.clock.now();
  let total = 0;
  for (const table of ARCHIVED_TABLES) {
    for (let round = 0; round < ARCHIVE_MAX_BATCHES_PER_PASS; round++) {
      const moved = await archiveBatch(deps.db, table, as_of, batch);
      total += moved;
      if (moved > 0) deps.logger?.info({ job: 'audit-archival', table, moved }, 'audit rows copied to the archive');
      if (moved < batch) break;
    }
  }
  return total;
}
