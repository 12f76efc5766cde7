import { sql } from 'kysely';
import type { Db, Executor } from '../../db/database.ts';
import { isDatabaseTooSlow } from '../../db/resilience.ts';
import type { Clock } from '../../lib/clock.ts';
import { assert, present as presentValue } from '../../lib/assert.ts';
import type { AppError } from '../../lib/errors.ts';
import {
  isIssuanceAccount,
  LEDGER_BATCH_MAX,
  type BatchItemResult,
  type Ledger,
  type LedgerCallOptions,
  type LedgerVerification,
  type TransferCommand,
  type TransferResult,
} from './port.ts';
import { checkCommand } from './rules.ts';
import type { TransferRow } from './tables.ts';
import { batchSizeOutOfRange, insufficientFunds, keyUsedForAnotherTransfer, postingNotApplied } from './errors.ts';
import { GroupCommit } from '../../lib/group-commit.ts';

/**
 * One item's answer, completed from its command where `ledger_apply_all` answers only the status and
 * id of an applied item.
 */
interface AppliedItem {
  status: 'applied' | 'replayed' | 'insufficient_funds' | 'conflict' | 'not_applied';
  id?: string;
  key: string;
  kind?: TransferRow['kind'];
  debit_account?: string;
  credit_account?: string;
  amount_micro_pay?: number;
  memo?: string | null;
  created_at_ms?: number;
}

function present(item: AppliedItem): TransferResult {
  const why = `ledger_apply returns the transfer of ${item.status} item ${item.key}`;
  return {
    id: presentValue(item.id, why),
    key: item.key,
    kind: presentValue(item.kind, why),
    debit_account: presentValue(item.debit_account, why),
    credit_account: presentValue(item.credit_account, why),
    amount_micro_pay: Number(item.amount_micro_pay),
    memo: item.memo ?? null,
    created_at: new Date(Number(item.created_at_ms)).toISOString(),
    replayed: item.status === 'replayed',
  };
}

/** The error one refused item gets; null when it applied or replayed. */
function refusal(command: TransferCommand, item: AppliedItem | undefined): AppError | null {
  if (!item || item.status === 'not_applied') return postingNotApplied(command.key);
  if (item.status === 'insufficient_funds') {
    return insufficientFunds(command);
  }
  // the key holds another move (the rule is ledger_apply_all's): its own error, never a silent success
  if (item.status === 'conflict') return keyUsedForAnotherTransfer(command.key, present(item));
  return null;
}

/**
 * Applies checked commands in one round trip: `ledger_apply` (ledger/sql) applies them as one set, or item by item as
 * sets of one when the set stops (a replay, a conflict, a refusal): the key locks, the idempotency rule, the account
 * locks in name order, the overdraft check, the balance moves and the journal rows are ledger_apply_all's.
 * `atomic`: the first refusal undoes the items before it.
 */
async function applyChecked(
  trx: Executor,
  clock: Clock,
  commands: readonly TransferCommand[],
  atomic: boolean,
): Promise<AppliedItem[]> {
  if (commands.length === 0) return [];
  const now = clock.now();
  const items = ledgerItems(commands);
  const result = await sql<{
    results: AppliedItem[] | string;
  }>`select ledger_apply(${JSON.stringify(items)}::jsonb, ${atomic}, ${now}) as results`.execute(trx);
  const answers = presentValue(result.rows[0], 'select ledger_apply(...) returns one row').results;
  const answered = typeof answers === 'string' ? (JSON.parse(answers) as AppliedItem[]) : answers;
  // An atomic call stops at its first refusal: the items after it were never tried.
  const untried = atomic
    ? items.slice(answered.length).map((item) => ({ status: 'not_applied', key: item.key }) as AppliedItem)
    : [];
  return completed(items, [...answered, ...untried], now);
}

/**
 * The set-based path alone (`ledger_apply_all`): every item applied, or nothing written and null
 * (a replay, a conflict, a refusal or a key twice). It takes every key lock, then every account lock, each in sorted
 * order, so two such calls never deadlock.
 */
async function applyAllOrNothing(
  db: Executor,
  clock: Clock,
  commands: readonly TransferCommand[],
): Promise<AppliedItem[] | null> {
  const now = clock.now();
  const items = ledgerItems(commands);
  const result = await sql<{
    results: AppliedItem[] | string | null;
  }>`select ledger_apply_all(${JSON.stringify(items)}::jsonb, ${now}) as results`.execute(db);
  const answers = presentValue(result.rows[0], 'select ledger_apply_all(...) returns one row').results;
  return answers === null ? null : completed(items, answers, now);
}

function ledgerItems(commands: readonly TransferCommand[]) {
  return commands.map((command) => ({
    key: command.key,
    kind: command.kind,
    debit_account: command.debit_account,
    credit_account: command.credit_account,
    amount_micro_pay: command.amount_micro_pay,
    memo: command.memo ?? null,
    debit_issuance: isIssuanceAccount(command.debit_account),
    credit_issuance: isIssuanceAccount(command.credit_account),
  }));
}

/** The function's answers, an applied item's completed from its command (the function answers its status and id). */
function completed(items: ReturnType<typeof ledgerItems>, applied: AppliedItem[] | string, now: Date): AppliedItem[] {
  const answered = typeof applied === 'string' ? (JSON.parse(applied) as AppliedItem[]) : applied;
  assert(answered.length === items.length, `the ledger answered ${answered.length} items for ${items.length} commands`);
  const created_at_ms = now.getTime();
  return answered.map((answer, index) =>
    answer.status === 'applied'
      ? { ...presentValue(items[index], 'the ledger answers every item'), ...answer, created_at_ms }
      : answer,
  );
}

/**
 * Postcondition, paired with ledger_transfers' checks (amount > 0, debit differs from credit) and the non-negative
 * balance check: a posting applied or replayed as the very move its command asked for, so it debits exactly what it
 * credits.
 */
function assertMove(command: TransferCommand | undefined, transfer: TransferResult): void {
  assert(
    command !== undefined &&
      transfer.key === command.key &&
      transfer.amount_micro_pay === command.amount_micro_pay &&
      transfer.debit_account === command.debit_account &&
      transfer.credit_account === command.credit_account,
    `ledger posting ${transfer.key} is the move its command asked for`,
  );
}

function checkBatchSize(commands: readonly unknown[]): void {
  if (commands.length < 1 || commands.length > LEDGER_BATCH_MAX) {
    throw batchSizeOutOfRange(LEDGER_BATCH_MAX);
  }
}

/** Several postings, all or none (see Ledger.transferAll); runs in `executor`'s transaction when it is one. */
export async function applyTransfers(
  executor: Executor,
  clock: Clock,
  commands: readonly TransferCommand[],
): Promise<TransferResult[]> {
  checkBatchSize(commands);
  for (const command of commands) checkCommand(command);
  // one posting needs no subtransaction: a refused item writes nothing
  const applied = await applyChecked(executor, clock, commands, commands.length > 1);
  commands.forEach((command, index) => {
    const error = refusal(command, applied[index]);
    if (error && applied[index]?.status !== 'not_applied') throw error;
  });
  const transfers = applied.map(present);
  for (const [index, transfer] of transfers.entries()) assertMove(commands[index], transfer);
  return transfers;
}

/** Independent transfers, each with its own result (see Ledger.transferBatch). */
export async function applyBatch(
  executor: Executor,
  clock: Clock,
  commands: readonly TransferCommand[],
): Promise<BatchItemResult[]> {
  checkBatchSize(commands);
  const checked: { index: number; command: TransferCommand }[] = [];
  const results: BatchItemResult[] = commands.map((command, index) => {
    try {
      checkCommand(command);
      checked.push({ index, command });
      return { ok: false, error: { code: 'VALIDATION_ERROR', message: 'not applied' } };
    } catch (error) {
      return { ok: false, error: { code: 'VALIDATION_ERROR', message: (error as AppError).message } };
    }
  });
  const applied = await applyChecked(
    executor,
    clock,
    checked.map((entry) => entry.command),
    false,
  );
  checked.forEach(({ index, command }, position) => {
    const item = applied[position];
    const error = refusal(command, item);
    results[index] = error
      ? { ok: false, error: { code: error.code as 'LEDGER_INSUFFICIENT_FUNDS', message: error.message } }
      : { ok: true, transfer: present(presentValue(item, 'an applied batch item has its result')) };
  });
  return results;
}

const DEADLOCK_RETRIES = 5;

/**
 * A group of lone transfers, each answered as if it had run alone: one set (ledger_apply_all). A set that stops (a
 * replay, a conflict, a refusal among them) fails the group, and GroupCommit's rule runs each item alone, in arrival
 * order, as a set of one. A lone item can still meet a caller's multi-statement transaction in a deadlock; PostgreSQL
 * then rolls the victim's statement back whole, so it is run again.
 */
async function applyLone(db: Db, clock: Clock, commands: readonly TransferCommand[]): Promise<AppliedItem[]> {
  if (commands.length === 1) return retryDeadlock(() => applyChecked(db, clock, commands, false));
  const all = await retryDeadlock(() => applyAllOrNothing(db, clock, commands));
  if (!all) throw new Error('the set stopped: its items run alone');
  return all;
}

async function retryDeadlock<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if ((error as { code?: string }).code !== '40P01' || attempt > DEADLOCK_RETRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
    }
  }
}

/**
 * One transfer outside any transaction, in the next group commit: checked first (a bad command is refused before it
 * waits), then answered and refused exactly as `applyTransfer` would, since a non-atomic batch applies each item as if alone.
 */
async function applyGrouped(
  group: GroupCommit<TransferCommand, AppliedItem>,
  command: TransferCommand,
): Promise<TransferResult> {
  checkCommand(command);
  const item = await group.submit(command);
  const error = refusal(command, item);
  if (error) throw error;
  const transfer = present(item);
  assertMove(command, transfer);
  return transfer;
}

/** Applies one transfer inside `executor`'s transaction (or its own): one round trip, refusals thrown, nothing written for them. */
export async function applyTransfer(
  executor: Executor,
  clock: Clock,
  command: TransferCommand,
): Promise<TransferResult> {
  return presentValue((await applyTransfers(executor, clock, [command]))[0], 'one command gives one transfer');
}

/**
 * An account's balance: its row, plus its stripes for an issuance account (postings add to a stripe of
 * an issuance account rather than lock its row, so mints do not queue on it).
 */
const accountBalance = sql<string>`(ledger_accounts.balance_micro_pay + coalesce((select sum(s.delta_micro_pay) from ledger_issuance_stripes s where s.account = ledger_accounts.name), 0))::text`;

export async function readBalances(executor: Executor, names: readonly string[]): Promise<Map<string, number | null>> {
  const result = new Map<string, number | null>(names.map((name) => [name, null]));
  if (names.length === 0) return result;
  const rows = await executor
    .selectFrom('ledger_accounts')
    .select(['name', accountBalance.as('balance_micro_pay')])
    .where('name', 'in', [...names])
    .execute();
  for (const row of rows) result.set(row.name, Number(row.balance_micro_pay));
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
    const accounts = await executor
      .selectFrom('ledger_accounts')
      .select(['name', 'non_negative', accountBalance.as('balance_micro_pay')])
      .execute();
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
    return {
      accounts,
      journal: journal.rows,
      totals: presentValue(totals.rows[0], 'an aggregate without group by returns one row'),
    };
  };
  const snapshot = db.isTransaction
    ? await run(db)
    : await db.transaction().setIsolationLevel('repeatable read').execute(run);

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
  if (circulation !== minted - burned)
    problems.push(`circulation ${circulation} differs from minted ${minted} - burned ${burned}`);
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
  // each call autocommits: a few in flight use a few pooled connections, the rest gather behind them
  const lone = new GroupCommit((commands: TransferCommand[]) => applyLone(deps.db, deps.clock, commands), {
    max_in_flight: 4,
    max_batch: 8,
    refusesEveryItem: isDatabaseTooSlow,
  });
  return {
    kind: 'in_process',
    // inside the caller's transaction: one statement there; alone: grouped with the lone transfers beside it
    transfer: (command, options) =>
      options?.trx ? applyTransfer(options.trx, deps.clock, command) : applyGrouped(lone, command),
    transferAll: (commands, options) => applyTransfers(executor(options), deps.clock, commands),
    transferBatch: (commands, options) => applyBatch(executor(options), deps.clock, commands),
    async balance(account, options) {
      return (await readBalances(executor(options), [account])).get(account) ?? 0;
    },
    balances: (names, options) => readBalances(executor(options), names),
    creditedSince: (account, since, options) => creditedSince(executor(options), account, since),
    verify: () => verifyLedger(deps.db),
  };
}
