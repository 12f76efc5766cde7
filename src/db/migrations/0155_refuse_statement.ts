import { sql, type Kysely } from 'kysely';

/**
 * `mpay_refuse(reason)` raises: a statement that writes many tables at once through data-modifying CTEs (the batched
 * payment create, issue 11) calls it from its final SELECT when a check fails (an insert that skipped a conflicting
 * row, a reservation an offer no longer covers), so the whole statement rolls back with a reason instead of
 * committing half of it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(`
    create function mpay_refuse(reason text) returns boolean language plpgsql as $$
    begin
      raise exception 'refused: %', reason using errcode = 'raise_exception';
    end
    $$`).execute(db);
}
