import { defineModule } from '../module.ts';
import { settlementRoutes } from './routes.ts';
import { SettlementSchema } from './schema.ts';
import { settlementJob, type SettlementsDeps } from './service.ts';

/** Settlement batches of completed payments (the periodic run), their items and adjustments, and the CSV export. */
export const settlementsModule = defineModule({
  name: 'settlements',
  owns: ['settlements', 'settlement_items', 'settlement_adjustments'],
  calls: ['audit', 'events', 'payments'],
  start: ({ config, db, clock }) => {
    const deps: SettlementsDeps = { db, clock, fee_bps: config.settlement_fee_bps };
    return {
      deps,
      schemas: { shared: [SettlementSchema] },
      routes: async (server) => void (await server.register(settlementRoutes, { deps })),
      jobs: [
        {
          name: 'settlement-run',
          interval_ms: config.settlement_interval_seconds * 1000,
          run: () => settlementJob(deps),
        },
      ],
    };
  },
});
