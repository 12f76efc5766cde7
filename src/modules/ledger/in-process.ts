import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { inTransaction, type Db, type Executor, type Trx } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { isIssuanceAccount, type Ledger, type LedgerCallOptions, type LedgerVerification, type TransferCommand, type TransferResult } from './port.ts';
import { checkCommand, replayOrConflict } from './rules.ts';
import type { TransferRow } from './tables.ts';

function present(row: TransferRow, replayed: boolean): TransferResult {
  return {
    id: row.id,
    key: row.key,
    kind: row.kind,
    debit_account: row.debit_account,
    credit_account: row.credit_account,
    amount_micro_pay: row.amount_micro_pay,
    memo: row.memo,
    created_at: row.created_at.toISOString(),
    replayed,
  };
}

async function findByKey(executor: Executor, key: string): Promise<TransferRow | undefined> {
  return executor.selectFrom('ledger_transfers').selectAll().where('key', '=', key).executeTakeFirst();
}

/**
 * Applies one transfer inside `trx`. Order: idempotency (under a per-key advisory lock, so two concurrent uses of
 * one key serialize and the second replays), then the balance moves in account-name order (so opposite transfers
 * never deadlock), the debit as a conditional UPDATE that refuses an overdraft, then the journal row. A refusal
 * throws before the journal row exists, so a caller that catches it keeps a consistent transaction.
 */
export async function applyTransfer(trx: Trx, clock: Clock, command: TransferCommand): Promise<TransferResult> {
  checkCommand(command);
  await sql`select pg_advisory_xact_lock(hashtextextended(${`ledger:${command.key}`}, 0))`.execute(trx);
  const existing = await findByKey(trx, command.key);
  if (existing) return replayOrConflict(command, present(existing, true));

  const now = clock.now();
  const debit_issuance = isIssuanceAccount(command.debit_account);
  // An unused non-negative account has nothing to give: refuse without creating it.
  const accounts_to_open = debit_issuance ? [command.debit_account, command.credit_account] : [command.credit_account];
  await trx
    .insertInto('ledger_accounts')
    .values(accounts_to_open.map((name) => ({ name, non_negative: !isIssuanceAccount(name), balance_micro_pay: 0, created_at: now })))
    .onConflict((conflict) => conflict.column('name').doNothing())
    .execute();

  const moves = [
    { name: command.debit_account, delta: -command.amount_micro_pay },
    { name: command.credit_account, delta: command.amount_micro_pay },
  ].sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const move of moves) {
    const updated = await trx
      .updateTable('ledger_accounts')
      .set((eb) => ({ balance_micro_pay: eb('balance_micro_pay', '+', move.delta) }))
      .where('name', '=', move.name)
      .where((eb) => (move.delta < 0 ? eb.or([eb('non_negative', '=', false), eb('balance_micro_pay', '>=', -move.delta)]) : eb.val(true)))
      .returning('balance_micro_pay')
      .executeTakeFirst();
    if (!updated) {
      throw new AppError('LEDGER_INSUFFICIENT_FUNDS', `Account ${command.debit_account} has less than ${command.amount_micro_pay} micro-PAY`, [
        { field: 'debit_account', message: 'insufficient funds', account: command.debit_account },
      ]);
    }
  }

  const row: TransferRow = {
    id: randomUUID(),
    key: command.key,
    kind: command.kind,
    debit_account: command.debit_account,
    credit_account: command.credit_account,
    amount_micro_pay: command.amount_micro_pay,
    memo: command.memo ?? null,
    created_at: now,
  };
  await trx.insertInto('ledger_transfers').values(row).execute();
  return present(row, false);
}

export async function readBalances(executor: Executor, names: readonly string[]): Promise<Map<string, number | null>> {
  const result = new Map<string, number | null>(names.map((name) => [name, null]));
  if (names.length === 0) return result;
  const rows = await executor.selectFrom('ledger_accounts').select(['name', 'balance_micro_pay']).where('name', 'in', [...names]).execute();
  for (const row of rows) result.set(row.name, row.balance_micro_pay);
  return result;
}

export async function creditedSince(executor: Executor, account: string, since: Date): Promise<number> {
  const row = await executor
    .selectFrom('ledger_transfers')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('amount_micro_pay'), sql<string>`0`).as('total'))
    .where('credit_account', '=', account)
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

/** The invariants, recomputed from the journal in one snapshot (repeatable read, so concurrent writes cannot skew it). */
export async function verifyLedger(db: Db): Promise<LedgerVerification> {
  const run = async (executor: Executor) => {
    const accounts = await executor.selectFrom('ledger_accounts').selectAll().execute();
    const journal = await sql<{ account: string; net: string }>`
      select account, sum(net)::text as net from (
        select credit_account as account, amount_micro_pay as net from ledger_transfers
        union all
        select debit_account as account, -amount_micro_pay as net from ledger_transfers
      ) moves group by account`.execute(executor);
    const totals = await sql<{ transfers: string; minted: string; burned: string }>`
      select count(*)::text as transfers,
        coalesce(sum(amount_micro_pay) filter (where kind = 'mint'), 0)::text as minted,
        coalesce(sum(amount_micro_pay) filter (where kind = 'burn'), 0)::text as burned
      from ledger_transfers`.execute(executor);
    return { accounts, journal: journal.rows, totals: totals.rows[0]! };
  };
  const snapshot = db.isTransaction ? await run(db) : await db.transaction().setIsolationLevel('repeatable read').execute(run);

  const net_by_account = new Map(snapshot.journal.map((row) => [row.account, BigInt(row.net)]));
  let total = 0n;
  let circulation = 0n;
  const negative_accounts: string[] = [];
  const mismatched_accounts: string[] = [];
  for (const account of snapshot.accounts) {
    const balance = BigInt(account.balance_micro_pay);
    total += balance;
    if (!isIssuanceAccount(account.name)) circulation += balance;
    if (account.non_negative && balance < 0n) negative_accounts.push(account.name);
    if ((net_by_account.get(account.name) ?? 0n) !== balance) mismatched_accounts.push(account.name);
  }
  const minted = BigInt(snapshot.totals.minted);
  const burned = BigInt(snapshot.totals.burned);
  const problems: string[] = [];
  if (total !== 0n) problems.push(`sum of balances is ${total}, not 0`);
  if (circulation !== minted - burned) problems.push(`circulation ${circulation} differs from minted ${minted} - burned ${burned}`);
  if (negative_accounts.length) problems.push(`${negative_accounts.length} non-negative account(s) below zero`);
  if (mismatched_accounts.length) problems.push(`${mismatched_accounts.length} account(s) differ from their journal`);
  return {
    ok: problems.length === 0,
    accounts: snapshot.accounts.length,
    transfers: Number(snapshot.totals.transfers),
    total_balance_micro_pay: Number(total),
    minted_micro_pay: Number(minted),
    burned_micro_pay: Number(burned),
    circulation_micro_pay: Number(circulation),
    negative_accounts,
    mismatched_accounts,
    problems,
  };
}

/** The default adapter: the ledger's tables live in the gateway's database; `{ trx }` joins the caller's transaction. */
export function createInProcessLedger(deps: { db: Db; clock: Clock }): Ledger {
  const executor = (options?: LedgerCallOptions): Executor => options?.trx ?? deps.db;
  return {
    kind: 'in_process',
    transfer: (command, options) => inTransaction(executor(options), (trx) => applyTransfer(trx, deps.clock, command)),
    async balance(account, options) {
      return (await readBalances(executor(options), [account])).get(account) ?? 0;
    },
    balances: (names, options) => readBalances(executor(options), names),
    creditedSince: (account, since, options) => creditedSince(executor(options), account, since),
    verify: () => verifyLedger(deps.db),
  };
}
