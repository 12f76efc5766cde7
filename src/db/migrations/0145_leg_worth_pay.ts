import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    -- No leg is worth 0 PAY: the completion posts every leg, and a leg that buys nothing would be fiat paid for
    -- nothing. The allocator asserts the same before it writes a leg (checkedLegs); this is the second half of the
    -- pair. NOT VALID: rows written before the allocator refused such legs are not re-checked.
    alter table payment_legs add constraint payment_legs_worth_pay check (amount_micro_pay > 0) not valid
  `,
  );
}
