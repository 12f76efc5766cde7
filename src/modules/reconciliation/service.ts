import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { Db, Executor } from '../../db/database.ts';
import { fillExpectations } from '../buy-orders/ledger.ts';
import { disputeExpectations } from '../disputes/service.ts';
import { adjustmentExpectations, compareJournal, journal, type Difference } from '../ledger/reconcile.ts';
import { shortfallExpectations } from '../ledger/shortfalls.ts';
import { ledgerSupply, type SupplyReport } from '../ledger/supply.ts';
import { sellerFundingExpectations } from '../liquidity/service.ts';
import { paymentExpectations } from '../payments/reconcile.ts';
import { pendingFundsExpectations } from '../pending-funds/service.ts';
import { sellOrderExpectations } from '../sell-orders/ledger.ts';

/**
 * Every difference between the ledger journal and the business records: each module that moves PAY states the
 * transfers its rows imply (payment legs and fees, confirmed pending funds, fills and their reversals, sell-order
 * reserves, releases and burns, seller fundings, audited adjustments, dispute resolutions, sandbox sellers), and the
 * journal must hold exactly those. Read in one snapshot-consistent transaction (repeatable read), so work committing
 * meanwhile is seen whole or not at all.
 */
export async function reconcileLedger(executor: Executor): Promise<Difference[]> {
  const expected = [
    ...(await paymentExpectations(executor)),
    ...(await pendingFundsExpectations(executor)),
    ...(await fillExpectations(executor)),
    ...(await sellOrderExpectations(executor)),
    ...(await sellerFundingExpectations(executor)),
    ...(await adjustmentExpectations(executor)),
    ...(await disputeExpectations(executor)),
    ...(await shortfallExpectations(executor)),
  ];
  return compareJournal(await journal(executor), expected);
}

/** The supply report with its reconciliation (`GET /admin/ledger/supply`), from one snapshot. */
export async function supplyWithDifferences(db: Db): Promise<SupplyReport & { differences: Difference[] }> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => ({ ...(await ledgerSupply(trx)), differences: await reconcileLedger(trx) }));
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
