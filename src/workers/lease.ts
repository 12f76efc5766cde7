import type { Db, Trx } from '../db/database.ts';

/**
 * The leased-work pass shared by the jobs that call a slow dependency (the receipt validator) per row: due rows are
 * picked `FOR UPDATE SKIP LOCKED` (several workers share them) and leased by one update in the same short
 * transaction, so no transaction spans the call; then each row is worked on its own, and a row that throws is handed
 * to `onError` (release it with a delay) and never holds the others to the lease. Answers how many rows it took.
 */
export async function workLeased<Row extends { id: string }>(
  db: Db,
  steps: {
    /** The due rows, locked `FOR UPDATE SKIP LOCKED` and ordered by when they came due. */
    pick: (trx: Trx) => Promise<Row[]>;
    /** Leases the picked rows (sets their claimed-until column). */
    lease: (trx: Trx, ids: string[]) => Promise<unknown>;
    work: (row: Row) => Promise<void>;
    onError: (row: Row, error: unknown) => Promise<void>;
  },
): Promise<number> {
  const rows = await db.transaction().execute(async (trx) => {
    const picked = await steps.pick(trx);
    if (picked.length > 0)
      await steps.lease(
        trx,
        picked.map((row) => row.id),
      );
    return picked;
  });
  for (const row of rows) {
    try {
      await steps.work(row);
    } catch (error) {
      await steps.onError(row, error);
    }
  }
  return rows.length;
}
