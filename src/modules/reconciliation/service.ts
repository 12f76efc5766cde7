import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { Db, Executor } from '../../db/database.ts';
import { compareJournal, journal, type Difference } from '../ledger/reconcile.ts';
import { ledgerSupply, type SupplyReport } from '../ledger/supply.ts';
import { FLOWS } from './flows/index.ts';
import type { IdentityBreak } from './flows/flow.ts';
import { feesIdentity, supplyIdentity } from './identities.ts';

/**
 * Every difference between the ledger journal and the business records. Reconciliation derives what the journal
 * should hold from the business rows with its own arithmetic and its own account names (flows/, one file per flow),
 * never by calling the code that posts, so a wrong account or amount inside a builder is a difference rather than
 * an agreement; each posting's key, kind, accounts and amount is checked. Then the identities across flows: the fees
 * account holds the completed payments' fees, every fill's mint is answered (its order's burn, a reversal and its
 * shortfall, or a confirmed payment), and supply is mints less burns cause by cause. Read in one snapshot-consistent
 * transaction (repeatable read), so work committing meanwhile is seen whole or not at all.
 */
export async function reconcileLedger(executor: Executor, supply?: SupplyReport): Promise<Difference[]> {
  const derived = await Promise.all(FLOWS.map((flow) => flow.derive(executor)));
  const expected = derived.flatMap((flow) => flow.expected);
  const posted = await journal(executor);
  const breaks: IdentityBreak[] = [
    ...derived.flatMap((flow) => flow.breaks),
    ...(await feesIdentity(executor, posted)),
    ...supplyIdentity(supply ?? (await ledgerSupply(executor)), expected, posted),
  ];
  const identities: Difference[] = breaks.map((entry) => ({
    cause: entry.cause,
    key: entry.key,
    problem: 'identity',
    expected: null,
    actual: null,
    detail: entry.detail,
    rows: entry.rows,
  }));
  return [...compareJournal(posted, expected), ...identities].sort((a, b) =>
    a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
  );
}

/** The supply report with its reconciliation (`GET /admin/ledger/supply`), from one snapshot. */
export async function supplyWithDifferences(db: Db): Promise<SupplyReport & { differences: Difference[] }> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const supply = await ledgerSupply(trx);
      return { ...supply, differences: await reconcileLedger(trx, supply) };
    });
}

export function createReconciliationGauge(registry: Registry): Gauge<'cause'> {
  return new Gauge({
    name: 'mpay_ledger_reconciliation_differences',
    help: 'Differences between the ledger journal and the business records at the last reconciliation, per cause (0 is normal)',
    labelNames: ['cause'] as const,
    registers: [registry],
  });
}

/** The daily job: reconciles, sets the gauge per cause (every cause, 0 included) and logs each difference. */
export async function reconciliationJob(deps: {
  db: Db;
  gauge: Gauge<'cause'>;
  logger?: Logger | undefined;
  causes: readonly string[];
}): Promise<number> {
  const { differences } = await supplyWithDifferences(deps.db);
  for (const cause of deps.causes)
    deps.gauge.set({ cause }, differences.filter((difference) => difference.cause === cause).length);
  for (const difference of differences)
    deps.logger?.error({ job: 'ledger-reconcile', difference }, 'the ledger and the business records differ');
  return 0;
}
