import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, Executor, Trx } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import { AppError } from '../../lib/errors.ts';
import { isIssuanceAccount, type Ledger, type TransferCommand, type TransferResult } from './port.ts';

/**
 * Shortfalls: PAY a merchant owes because a move had to take PAY back from it after it had spent some (a failed cash
 * leg's reversal, a dispute's resolution). The move takes what the account holds (`takeUpTo`) and records the rest as
 * owed to the move's credit account. Every later credit of the debtor's available account pays it back first, in the
 * same transaction and before anybody can spend it (`collectingShortfalls` wraps the ledger port, so no credit path
 * can forget): each collection is a posting of its own, keyed by the shortfall and the credit, to the creditor (a
 * burn to an issuance account, a transfer to another merchant). So a deficit never stays unbacked PAY in circulation.
 */

const MERCHANT_AVAILABLE = /^(live|sandbox):merchant:[^:]+:available$/;

/** What `takeUpTo` moved and what it left owed. */
export interface TakenUpTo {
  transfer: TransferResult | null;
  taken_micro_pay: number;
  shortfall_micro_pay: number;
}

/** The amount a key already moved, from the ledger's answer to a conflicting retry (the same accounts, another amount). */
function firstAmountOf(error: unknown, command: Omit<TransferCommand, 'amount_micro_pay'>): number | null {
  if (!(error instanceof AppError) || error.code !== 'LEDGER_IDEMPOTENCY_CONFLICT') return null;
  const existing = (error.details[0] as { existing?: Partial<TransferCommand> } | undefined)?.existing;
  if (
    !existing ||
    existing.kind !== command.kind ||
    existing.debit_account !== command.debit_account ||
    existing.credit_account !== command.credit_account ||
    typeof existing.amount_micro_pay !== 'number'
  )
    return null;
  return existing.amount_micro_pay;
}

/**
 * Moves at most `cap` (and at most what the debit account holds) under `command.key`, deterministically across retries:
 * the whole amount is asked first, so a key that already moved PAY (an HTTP ledger's write that committed before the
 * caller's transaction failed) answers with its first amount, which is then replayed, never a second amount that the
 * ledger would refuse as LEDGER_IDEMPOTENCY_CONFLICT. Null when nothing could be moved.
 */
async function moveUpTo(ledger: Ledger, trx: Trx, command: TransferCommand): Promise<TransferResult | null> {
  let amount_micro_pay = command.amount_micro_pay;
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await ledger.transfer({ ...command, amount_micro_pay }, { trx });
    } catch (error) {
      const first = firstAmountOf(error, command);
      if (first !== null && first !== amount_micro_pay && attempt < 4) {
        amount_micro_pay = first;
        continue;
      }
      if (!(error instanceof AppError && error.code === 'LEDGER_INSUFFICIENT_FUNDS') || attempt >= 4) throw error;
      // Nothing moved under this key yet: take what the account holds (another transaction may spend meanwhile).
      const held = await ledger.balance(command.debit_account, { trx });
      amount_micro_pay = Math.min(command.amount_micro_pay, Math.max(0, held));
      if (amount_micro_pay === 0) return null;
    }
  }
}

/**
 * A move that takes PAY back (a burn to an issuance account, or a transfer to another party): what the debit account
 * holds, up to the amount; the rest becomes the debit account's shortfall, owed to the credit account and collected
 * from its next credits. Keyed by the move's key, so a retried move neither moves nor records twice.
 */
export async function takeUpTo(
  ledger: Ledger,
  trx: Trx,
  command: TransferCommand & { kind: 'burn' | 'transfer' },
  at: Date,
): Promise<TakenUpTo> {
  const transfer = await moveUpTo(ledger, trx, command);
  const taken_micro_pay = transfer?.amount_micro_pay ?? 0;
  const shortfall_micro_pay = command.amount_micro_pay - taken_micro_pay;
  if (shortfall_micro_pay > 0)
    await trx
      .insertInto('pay_shortfalls')
      .values({
        id: randomUUID(),
        origin_key: command.key,
        debtor_account: command.debit_account,
        creditor_account: command.credit_account,
        amount_micro_pay: shortfall_micro_pay,
        memo: command.memo ?? null,
        created_at: at,
      })
      .onConflict((conflict) => conflict.column('origin_key').doNothing())
      .execute();
  return { transfer, taken_micro_pay, shortfall_micro_pay };
}

/** The key of one collection: the shortfall and the credit it was collected from (hashed: keys stay short). */
export const shortfallCollectionKey = (shortfall_id: string, credit_key: string) =>
  `shortfall:${shortfall_id}:from:${sha256Hex(credit_key).slice(0, 32)}`;

interface OutstandingShortfall {
  id: string;
  debtor_account: string;
  creditor_account: string;
  outstanding_micro_pay: number;
}

async function outstandingOf(executor: Executor, debtors: readonly string[], lock: boolean) {
  let select = executor
    .selectFrom('pay_shortfalls')
    .select([
      'id',
      'debtor_account',
      'creditor_account',
      sql<string>`(amount_micro_pay - collected_micro_pay)::text`.as('outstanding'),
    ])
    .where('debtor_account', 'in', [...debtors])
    .where(sql<boolean>`collected_micro_pay < amount_micro_pay`)
    .orderBy('created_at')
    .orderBy('id');
  if (lock) select = select.forUpdate();
  return (await select.execute()).map(
    (row): OutstandingShortfall => ({
      id: row.id,
      debtor_account: row.debtor_account,
      creditor_account: row.creditor_account,
      outstanding_micro_pay: Number(row.outstanding),
    }),
  );
}

/** Outstanding shortfall of one account (the balance view's `shortfall_micro_pay`). */
export async function outstandingShortfallMicroPay(executor: Executor, account: string): Promise<number> {
  const rows = await outstandingOf(executor, [account], false);
  return rows.reduce((sum, row) => sum + row.outstanding_micro_pay, 0);
}

/**
 * After credits in `trx`: each credit of a merchant's available account pays its outstanding shortfalls back first,
 * oldest first, up to the credit and to what the account holds. A credit already collected from (a replay) is not
 * collected from again.
 */
async function collect(
  ledger: Ledger,
  deps: { clock: Clock },
  trx: Trx,
  credits: readonly Pick<TransferCommand, 'key' | 'credit_account' | 'amount_micro_pay'>[],
): Promise<void> {
  const credited = credits.filter((credit) => MERCHANT_AVAILABLE.test(credit.credit_account));
  if (credited.length === 0) return;
  const owed = await outstandingOf(trx, [...new Set(credited.map((credit) => credit.credit_account))], true);
  if (owed.length === 0) return;
  for (const credit of credited) {
    let remaining = credit.amount_micro_pay;
    for (const shortfall of owed) {
      if (remaining === 0) break;
      if (shortfall.debtor_account !== credit.credit_account || shortfall.outstanding_micro_pay === 0) continue;
      const key = shortfallCollectionKey(shortfall.id, credit.key);
      const done = await trx
        .selectFrom('pay_shortfall_collections')
        .select('amount_micro_pay')
        .where('key', '=', key)
        .executeTakeFirst();
      if (done) {
        remaining -= Math.min(remaining, Number(done.amount_micro_pay));
        continue;
      }
      const transfer = await moveUpTo(ledger, trx, {
        key,
        kind: isIssuanceAccount(shortfall.creditor_account) ? 'burn' : 'transfer',
        debit_account: shortfall.debtor_account,
        credit_account: shortfall.creditor_account,
        amount_micro_pay: Math.min(remaining, shortfall.outstanding_micro_pay),
        memo: `shortfall ${shortfall.id} collected from credit ${credit.key}`,
      });
      if (!transfer) break;
      const amount_micro_pay = transfer.amount_micro_pay;
      await trx
        .insertInto('pay_shortfall_collections')
        .values({
          key,
          shortfall_id: shortfall.id,
          amount_micro_pay,
          credit_key: credit.key,
          created_at: deps.clock.now(),
        })
        .execute();
      await trx
        .updateTable('pay_shortfalls')
        .set((eb) => ({ collected_micro_pay: eb('collected_micro_pay', '+', amount_micro_pay) }))
        .where('id', '=', shortfall.id)
        .execute();
      shortfall.outstanding_micro_pay -= amount_micro_pay;
      remaining -= amount_micro_pay;
    }
  }
}

/**
 * The ledger port every module uses: the adapter's, plus the collection of shortfalls from every credit of a
 * merchant's available account, in the credit's transaction (a credit made outside one runs in a new transaction with
 * its collections when its account owes anything).
 */
export function collectingShortfalls(inner: Ledger, deps: { db: Db; clock: Clock }): Ledger {
  const self: Ledger = {
    kind: inner.kind,
    async transfer(command, options) {
      if (options?.trx) {
        const result = await inner.transfer(command, options);
        await collect(self, deps, options.trx, [command]);
        return result;
      }
      if (!(await owes(command.credit_account))) return inner.transfer(command);
      return deps.db.transaction().execute(async (trx) => {
        const result = await inner.transfer(command, { trx });
        await collect(self, deps, trx, [command]);
        return result;
      });
    },
    async transferAll(commands, options) {
      if (options?.trx) {
        const results = await inner.transferAll(commands, options);
        await collect(self, deps, options.trx, commands);
        return results;
      }
      if (!(await owesAny(commands))) return inner.transferAll(commands);
      return deps.db.transaction().execute(async (trx) => {
        const results = await inner.transferAll(commands, { trx });
        await collect(self, deps, trx, commands);
        return results;
      });
    },
    async transferBatch(commands, options) {
      const run = async (trx: Trx | undefined) => {
        const results = await inner.transferBatch(commands, trx ? { trx } : undefined);
        if (trx)
          await collect(
            self,
            deps,
            trx,
            commands.filter((_, index) => results[index]?.ok === true),
          );
        return results;
      };
      if (options?.trx) return run(options.trx);
      if (!(await owesAny(commands))) return run(undefined);
      return deps.db.transaction().execute(run);
    },
    balance: (account, options) => inner.balance(account, options),
    balances: (names, options) => inner.balances(names, options),
    creditedSince: (account, since, options) => inner.creditedSince(account, since, options),
    verify: () => inner.verify(),
  };
  const owes = async (account: string) =>
    MERCHANT_AVAILABLE.test(account) && (await outstandingOf(deps.db, [account], false)).length > 0;
  const owesAny = async (commands: readonly TransferCommand[]) => {
    const credited = [...new Set(commands.map((c) => c.credit_account).filter((a) => MERCHANT_AVAILABLE.test(a)))];
    return credited.length > 0 && (await outstandingOf(deps.db, credited, false)).length > 0;
  };
  return self;
}
