import { defineModule } from '../module.ts';
import type { PaymentsDeps } from '../payments/service.ts';
import type { BankDirectory } from '../reference/banks.ts';
import { checkoutApiRoutes } from './api-routes.ts';
import { checkoutRoutes } from './routes.ts';

/** The buyer's hosted checkout page and its view-model (also `GET /v1/payments/{id}/checkout` and the PromptPay QR). */
export const checkoutModule = defineModule({
  name: 'checkout',
  owns: [],
  calls: ['liquidity', 'payments', 'reference'],
  start: ({ config }, needs: { payments: PaymentsDeps; banks: BankDirectory }) => ({
    routes: async (server) => {
      const deps = { ...needs.payments, banks: needs.banks };
      await server.register(checkoutRoutes, { deps, proof_max_bytes: config.proof_max_bytes });
      await server.register(checkoutApiRoutes, { deps });
    },
  }),
});
