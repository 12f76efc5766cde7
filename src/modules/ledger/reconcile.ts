import { sql } from 'kysely';
import { Type, type Static } from 'typebox';
import type { Executor } from '../../db/database.ts';
import type { TransferKind } from './port.ts';

/**
 * Reconciliation's vocabulary: the transfers business rows imply (`ExpectedTransfer`, key and all four fields, with
 * the rows behind it; the reconciliation module derives them, flow by flow) and the comparison with the journal:
 * every journal entry must be one of them and every one of them must be in the journal. A difference lists both sides
 * and the rows. An empty list is the normal state.
 */
export const RECONCILIATION_CAUSES = [
  'payment_leg',
  'fee',
  'pending_funds',
  'buy_order_fill',
  'sell_order',
  'seller_funding',
  'adjustment',
  'dispute',
  'shortfall',
  'refund',
  'sandbox',
  'other',
] as const;
export type ReconciliationCause = (typeof RECONCILIATION_CAUSES)[number];

export interface BusinessRow {
  table: string;
  id: string;
}

export interface ExpectedTransfer {
  key: string;
  kind: TransferKind;
  debit_account: string;
  credit_account: string;
  /** null: any positive amount (a transfer whose amount no business row keeps, e.g. a seller's first funding). */
  amount_micro_pay: number | null;
  cause: ReconciliationCause;
  rows: BusinessRow[];
}

const Posting = Type.Object({
  kind: Type.String(),
  debit_account: Type.String(),
  credit_account: Type.String(),
  amount_micro_pay: Type.Union([Type.Integer(), Type.Null()]),
});
export const DifferenceSchema = Type.Object({
  cause: Type.String({ enum: [...RECONCILIATION_CAUSES] }),
  key: Type.String({ description: 'The ledger idempotency key' }),
  problem: Type.Union(
    [Type.Literal('missing'), Type.Literal('unexpected'), Type.Literal('mismatch'), Type.Literal('identity')],
    {
      description:
        'missing: a business row implies a transfer the journal lacks; unexpected: a journal entry no business row explains; mismatch: both exist and differ (kind, an account or the amount); identity: an identity across flows does not hold (`key` names it, `detail` says what differs)',
    },
  ),
  expected: Type.Union([Posting, Type.Null()]),
  actual: Type.Union([Type.Object({ ...Posting.properties, transfer_id: Type.String() }), Type.Null()]),
  rows: Type.Array(Type.Object({ table: Type.String(), id: Type.String() }), {
    description: 'The business rows behind the expectation',
  }),
  detail: Type.Optional(Type.String({ description: 'For an identity: what should equal what, with both figures' })),
});
export type Difference = Static<typeof DifferenceSchema>;

interface JournalRow {
  id: string;
  key: string;
  kind: string;
  debit_account: string;
  credit_account: string;
  amount_micro_pay: number;
}

/** The cause a journal entry no business row explains is filed under, read off its key and accounts. */
function causeOfKey(row: JournalRow): ReconciliationCause {
  if (row.key.startsWith('payment:')) return row.key.endsWith(':fee') ? 'fee' : 'payment_leg';
  if (row.key.startsWith('buy_order:')) return 'buy_order_fill';
  if (row.key.startsWith('sell_order:')) return 'sell_order';
  if (row.key.startsWith('refund:')) return 'refund';
  if (row.key.startsWith('seller:')) return 'seller_funding';
  if (row.key.startsWith('adjustment:')) return 'adjustment';
  if (row.key.startsWith('dispute:')) return 'dispute';
  if (row.key.startsWith('shortfall:')) return 'shortfall';
  return 'other';
}

/** Compares the journal with the expectations; differences in key order. */
export function compareJournal(journal: readonly JournalRow[], expected: readonly ExpectedTransfer[]): Difference[] {
  const wanted = new Map(expected.map((entry) => [entry.key, entry]));
  const differences: Difference[] = [];
  const posting = (entry: ExpectedTransfer) => ({
    kind: entry.kind,
    debit_account: entry.debit_account,
    credit_account: entry.credit_account,
    amount_micro_pay: entry.amount_micro_pay,
  });
  const seen = new Set<string>();
  for (const row of journal) {
    seen.add(row.key);
    const actual = {
      kind: row.kind,
      debit_account: row.debit_account,
      credit_account: row.credit_account,
      amount_micro_pay: Number(row.amount_micro_pay),
      transfer_id: row.id,
    };
    const entry = wanted.get(row.key);
    if (!entry) {
      differences.push({
        cause: causeOfKey(row),
        key: row.key,
        problem: 'unexpected',
        expected: null,
        actual,
        rows: [],
      });
      continue;
    }
    const same =
      entry.kind === row.kind &&
      entry.debit_account === row.debit_account &&
      entry.credit_account === row.credit_account &&
      (entry.amount_micro_pay === null || entry.amount_micro_pay === actual.amount_micro_pay);
    if (!same)
      differences.push({
        cause: entry.cause,
        key: row.key,
        problem: 'mismatch',
        expected: posting(entry),
        actual,
        rows: entry.rows,
      });
  }
  for (const entry of expected) {
    if (!seen.has(entry.key))
      differences.push({
        cause: entry.cause,
        key: entry.key,
        problem: 'missing',
        expected: posting(entry),
        actual: null,
        rows: entry.rows,
      });
  }
  return differences.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The whole journal (the in-process ledger's table). */
export async function journal(executor: Executor): Promise<JournalRow[]> {
  const rows =
    await sql<JournalRow>`select id, key, kind, debit_account, credit_account, amount_micro_pay from ledger_transfers`.execute(
      executor,
    );
  return rows.rows;
}
