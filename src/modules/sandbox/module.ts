import { defineModule } from '../module.ts';
import { sandboxRoutes } from './routes.ts';
import type { SandboxDeps } from './service.ts';
import type { PaymentCompletionPort } from '../payments/ports.ts';

/**
 * `POST /v1/sandbox/*`: plays the contract's scenarios over synthetic sellers through the payments, settlements and
 * webhooks modules' functions; owns no table. `mpay trigger` event types live here too.
 */
export const sandboxModule = defineModule({
  name: 'sandbox',
  owns: [],
  calls: [
    'buy-orders',
    'disputes',
    'events',
    'liquidity',
    'payments',
    'pending-funds',
    'sell-orders',
    'settlements',
    'webhooks',
  ],
  start: ({ config, db, clock }, needs: { completion: PaymentCompletionPort }) => {
    const deps: SandboxDeps & { db: typeof db } = {
      db,
      clock,
      completion: needs.completion,
      public_base_url: config.public_base_url,
      settlement_fee_bps: config.settlement_fee_bps,
    };
    return { deps, routes: async (server) => void (await server.register(sandboxRoutes, { deps })) };
  },
});
