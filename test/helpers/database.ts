import { openScratchDatabase, type ScratchDatabase, type ScratchOptions } from '../../src/db/scratch.ts';

/**
 * A fresh, migrated database for one test file: in-memory PGlite by default; with DATABASE_URL, a new PostgreSQL
 * database created for this run and dropped on close. Each starts from the migrated image / template database built
 * once per schema (src/db/scratch.ts), so nothing depends on what another file or an earlier run did in its own.
 */
export function openTestDatabase(options: Pick<ScratchOptions, 'migrate' | 'timeouts'> = {}): Promise<ScratchDatabase> {
  return openScratchDatabase({
    server_url: process.env['DATABASE_URL'],
    prefix: `mpay_test_${process.pid}`,
    ...options,
  });
}
