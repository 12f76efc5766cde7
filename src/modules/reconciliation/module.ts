import { RECONCILIATION_CAUSES } from '../ledger/reconcile.ts';
import { defineModule } from '../module.ts';
import { reconciliationRoutes } from './routes.ts';
import { createReconciliationGauge, reconciliationJob } from './service.ts';

const DAY_MS = 24 * 3600_000;

/**
 * Reconciliation of the ledger with the business records (`GET /admin/ledger/supply`, `mpay ledger reconcile`) and
 * its daily job with the `mpay_ledger_reconciliation_differences` gauge. Reads the business rows of every module that
 * moves PAY and derives what the journal should hold with its own arithmetic (flows/), never through the code that posts.
 */
export const reconciliationModule = defineModule({
  name: 'reconciliation',
  owns: [],
  calls: ['audit', 'ledger'],
  start: ({ db, logger, registry }) => {
    const gauge = createReconciliationGauge(registry);
    return {
      routes: async (server) => void (await server.register(reconciliationRoutes, { db })),
      jobs: [
        {
          name: 'ledger-reconcile',
          interval_ms: DAY_MS,
          run: () => reconciliationJob({ db, gauge, logger, causes: RECONCILIATION_CAUSES }),
        },
      ],
    };
  },
});
