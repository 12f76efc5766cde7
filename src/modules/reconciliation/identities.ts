import type { Executor } from '../../db/database.ts';
import type { SupplyCause, SupplyReport } from '../ledger/supply.ts';
import { expectedAccount } from './accounts.ts';
import type { Expected, IdentityBreak } from './flows/flow.ts';

interface Posted {
  key: string;
  kind: string;
  debit_account: string;
  credit_account: string;
  amount_micro_pay: number;
}

/** The reconciliation cause a supply cause's break is counted under (the gauge's label). */
const CAUSE_OF_SUPPLY: Record<SupplyCause, IdentityBreak['cause']> = {
  seller_funding: 'seller_funding',
  payment_synthetic_seller: 'sandbox',
  pending_funds: 'pending_funds',
  buy_order_fill: 'buy_order_fill',
  sell_order_completion: 'sell_order',
  adjustment: 'adjustment',
  dispute: 'dispute',
  other: 'other',
};

const MODES = [
  ['live', false],
  ['sandbox', true],
] as const;

/**
 * The fees account of each mode holds exactly the fees the completed (and partly paid) payments of that mode record
 * (their `fee_micro_pay`): nothing else may pay into it or take from it.
 */
export async function feesIdentity(executor: Executor, journal: readonly Posted[]): Promise<IdentityBreak[]> {
  const breaks: IdentityBreak[] = [];
  const recorded = await executor
    .selectFrom('payments')
    .select(['is_sandbox', (eb) => eb.fn.sum<string>('fee_micro_pay').as('fees')])
    .where('status', 'in', ['completed', 'partially_paid', 'settled'])
    .groupBy('is_sandbox')
    .execute();
  for (const [mode, is_sandbox] of MODES) {
    const account = expectedAccount.fees(is_sandbox);
    let held = 0;
    for (const row of journal) {
      if (row.credit_account === account) held += Number(row.amount_micro_pay);
      if (row.debit_account === account) held -= Number(row.amount_micro_pay);
    }
    const fees = Number(recorded.find((row) => row.is_sandbox === is_sandbox)?.fees ?? 0);
    if (held !== fees)
      breaks.push({
        key: `identity:fees:${mode}`,
        cause: 'fee',
        detail: `${account} holds ${held} micro-PAY; the completed payments' fees add up to ${fees}`,
        rows: [],
      });
  }
  return breaks;
}

/**
 * Supply equals mints less burns, cause by cause: for each mode and supply cause, the net the business rows imply
 * (their expected mints less burns; an expectation with no amount counts what the journal posted under its key) must be
 * the net the supply report counts from the journal.
 */
export function supplyIdentity(
  report: SupplyReport,
  expected: readonly Expected[],
  journal: readonly Posted[],
): IdentityBreak[] {
  const posted = new Map(journal.map((row) => [row.key, Number(row.amount_micro_pay)]));
  const implied = new Map<string, number>();
  for (const entry of expected) {
    if (entry.kind === 'transfer') continue;
    const cause: SupplyCause = entry.supply ?? 'other';
    const mode = entry.debit_account.startsWith('sandbox:') ? 'sandbox' : 'live';
    const amount = entry.amount_micro_pay ?? posted.get(entry.key) ?? 0;
    const id = `${mode}:${cause}`;
    implied.set(id, (implied.get(id) ?? 0) + (entry.kind === 'mint' ? amount : -amount));
  }
  const breaks: IdentityBreak[] = [];
  for (const [mode] of MODES) {
    for (const row of report[mode].causes) {
      const want = implied.get(`${mode}:${row.cause}`) ?? 0;
      if (want !== row.net_micro_pay)
        breaks.push({
          key: `identity:supply:${mode}:${row.cause}`,
          cause: CAUSE_OF_SUPPLY[row.cause as SupplyCause],
          detail: `the journal's ${row.cause} supply is ${row.net_micro_pay} micro-PAY net; the business rows imply ${want}`,
          rows: [],
        });
    }
  }
  return breaks;
}
