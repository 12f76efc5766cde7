import type { Ledger } from '../ledger/port.ts';
import { defineModule } from '../module.ts';
import type { ReceiptValidator } from '../validators/port.ts';
import { pendingFundsRoutes } from './routes.ts';
import { PendingFundsSchema } from './schema.ts';
import { createRevalidationMetrics, revalidatePendingFunds } from './revalidation.ts';
import type { PendingFundsDeps } from './deps.ts';
import { sweepPendingFunds } from './sweep.ts';

/** Funds waiting for the receiver's confirmation, their append-only confirm audit, the intake revalidation and the TTL sweeper. */
export const pendingFundsModule = defineModule({
  name: 'pending-funds',
  owns: ['pending_funds', 'receiver_confirm_audit', 'pending_funds_receipts'],
  calls: ['events', 'ledger', 'validators'],
  start: ({ config, db, clock, logger, registry }, needs: { ledger: Ledger; validator: ReceiptValidator }) => {
    const deps: PendingFundsDeps = {
      db,
      clock,
      ledger: needs.ledger,
      validator: needs.validator,
      max_attempts: config.receiver_confirm_max_attempts,
      ttl_hours: config.pending_funds_ttl_hours,
      window_hours: config.receiver_confirm_window_hours,
      revalidations: createRevalidationMetrics(registry),
      logger,
    };
    return {
      deps,
      schemas: { document: { PendingFunds: PendingFundsSchema } },
      routes: async (server) => void (await server.register(pendingFundsRoutes, { deps })),
      jobs: [
        {
          name: 'pending-funds-sweep',
          interval_ms: config.worker_poll_interval_ms * 5,
          run: () => sweepPendingFunds(deps),
        },
        {
          name: 'pending-funds-revalidation',
          interval_ms: config.worker_poll_interval_ms * 5,
          run: () => revalidatePendingFunds(deps),
        },
      ],
    };
  },
});
