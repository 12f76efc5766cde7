import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * The PAY ledger: accounts with a running balance, and an append-only journal of transfers. The balance column is
 * derivable from the journal (the verify check recomputes it); it is kept so a debit can refuse an overdraft with
 * one conditional UPDATE under the row lock.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table ledger_accounts (
      name text primary key,
      non_negative boolean not null,
      balance_micro_pay bigint not null default 0,
      created_at timestamptz not null,
      constraint ledger_accounts_no_overdraft check (not non_negative or balance_micro_pay >= 0)
    );

    create table ledger_transfers (
      id uuid primary key,
      key text not null unique,
      kind text not null check (kind in ('mint', 'burn', 'transfer')),
      debit_account text not null references ledger_accounts(name),
      credit_account text not null references ledger_accounts(name),
      amount_micro_pay bigint not null check (amount_micro_pay > 0),
      memo text,
      created_at timestamptz not null,
      check (debit_account <> credit_account)
    );
    create index ledger_transfers_credit on ledger_transfers (credit_account, created_at);
    create index ledger_transfers_debit on ledger_transfers (debit_account, created_at);
  `,
  );
}
