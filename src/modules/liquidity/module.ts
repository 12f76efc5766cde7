import type { Ledger } from '../ledger/port.ts';
import { defineModule } from '../module.ts';
import { createSellerFunding } from './funding.ts';
import { liquidityRoutes } from './routes.ts';

/** Seller offers and their liquidity: FIFO allocation across offers, reservations, rates; a live seller's PAY funding. */
export const liquidityModule = defineModule({
  name: 'liquidity',
  owns: ['sellers'],
  calls: ['audit', 'ledger', 'merchants'],
  start: ({ db, clock }, needs: { ledger: Ledger }) => {
    const funding = createSellerFunding(needs.ledger);
    return {
      funding,
      routes: async (server) =>
        void (await server.register(liquidityRoutes, { db, clock, funding, ledger: needs.ledger })),
    };
  },
});
