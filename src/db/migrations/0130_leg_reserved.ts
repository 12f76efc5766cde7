import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    -- What a leg holds of its seller's liquidity, in the seller's fiat at the seller's own rate. Null means the
    -- leg's allocated_fiat_amount (a leg at the seller's rate). A leg priced at a lower quote-lock rate costs the
    -- seller more PAY per fiat unit, so it holds more: ceil(allocated * seller_rate / lock_rate).
    alter table payment_legs add column reserved_minor bigint check (reserved_minor is null or reserved_minor >= allocated_fiat_amount)
  `,
  );
}
