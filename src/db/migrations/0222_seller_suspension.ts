import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * A seller whose PAY no longer covers a leg (the ledger refused a completion) is taken out of matching until an
 * operator funds it again: `active` false, with when and why. Null `suspended_at`: not suspended.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table sellers add column suspended_at timestamptz;
    alter table sellers add column suspension_reason text
  `,
  );
}
