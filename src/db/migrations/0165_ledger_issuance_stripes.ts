import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Issuance accounts keep their moves in stripes (account, stripe, delta), so postings to one issuance account never
 * wait for each other; its balance is its `ledger_accounts` row plus the sum of its stripes
 * (src/modules/ledger/sql/ledger_issuance_add.sql).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table ledger_issuance_stripes (
      account text not null references ledger_accounts(name),
      stripe smallint not null,
      delta_micro_pay bigint not null,
      primary key (account, stripe)
    );
  `,
  );
}
