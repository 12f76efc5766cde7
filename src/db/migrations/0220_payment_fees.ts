import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * The settlement fee is taken when a payment completes: the payment records its fee (fiat and PAY, and the rate in
 * basis points it was taken at), and a settlement batch and each of its items carry the same PAY fee, so a statement
 * and the ledger's fees account agree to the micro-PAY. Null on a payment that has not completed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table payments add column fee_bps integer check (fee_bps >= 0 and fee_bps <= 10000);
    alter table payments add column fee_minor bigint check (fee_minor >= 0);
    alter table payments add column fee_micro_pay bigint check (fee_micro_pay >= 0);
    alter table settlement_items add column fee_micro_pay bigint not null default 0 check (fee_micro_pay >= 0);
    alter table settlements add column fee_micro_pay bigint not null default 0 check (fee_micro_pay >= 0)
  `,
  );
}
