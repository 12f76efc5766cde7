import { defineModule } from '../module.ts';
import { BuyOrderSchema, buyOrderRoutes } from './routes.ts';
import { expireBuyOrders, type BuyOrdersDeps } from './service.ts';

/** Buy orders and the fills the matcher records against them; the expiry sweeper. */
export const buyOrdersModule = defineModule({
  name: 'buy-orders',
  owns: ['buy_orders', 'order_fills'],
  calls: ['events', 'ledger', 'reference'],
  start: ({ config, db, clock }) => {
    const deps: BuyOrdersDeps = { db, clock, pending_ttl_hours: config.buy_order_pending_ttl_hours };
    return {
      deps,
      schemas: { document: { BuyOrder: BuyOrderSchema } },
      routes: async (server) => void (await server.register(buyOrderRoutes, { deps })),
      jobs: [
        { name: 'buy-order-expiry', interval_ms: config.worker_poll_interval_ms * 5, run: () => expireBuyOrders(deps) },
      ],
    };
  },
});
