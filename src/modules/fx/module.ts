import { defineModule } from '../module.ts';
import { fxRoutes } from './routes.ts';
import { createQuoteLockPort } from './service.ts';

/** Reference prices and quote locks; offers payments the `QuoteLockPort` that consumes a lock in the create transaction. */
export const fxModule = defineModule({
  name: 'fx',
  owns: ['fx_reference_prices', 'fx_quote_locks'],
  calls: ['audit', 'liquidity', 'payments'],
  start: ({ config, db, clock }) => ({
    quote_locks: createQuoteLockPort(),
    routes: async (server) =>
      void (await server.register(fxRoutes, { deps: { db, clock, lock_seconds: config.fx_quote_lock_seconds } })),
  }),
});
