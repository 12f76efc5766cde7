import type { Ledger } from '../ledger/port.ts';
import { defineModule } from '../module.ts';
import { DisputeSchema, disputeRoutes } from './routes.ts';
import { openCashLegFailureDispute, type DisputesDeps } from './service.ts';

/**
 * Disputes and their event log; offers sell orders the auto-open hook for a failed cash leg (the
 * GATEWAY_DISPUTE_AUTO_OPEN_ENABLED switch), since sell orders sit below disputes.
 */
export const disputesModule = defineModule({
  name: 'disputes',
  owns: ['disputes', 'dispute_events', 'dispute_evidence'],
  calls: ['audit', 'buy-orders', 'events', 'ledger', 'sell-orders', 'validators', 'webhooks'],
  start: ({ config, db, clock }, needs: { ledger: Ledger }) => {
    const deps: DisputesDeps = { db, clock, ledger: needs.ledger };
    return {
      deps,
      on_cash_leg_failure: config.gateway_dispute_auto_open_enabled ? openCashLegFailureDispute : undefined,
      schemas: { document: { Dispute: DisputeSchema } },
      routes: async (server) => void (await server.register(disputeRoutes, { deps })),
    };
  },
});
