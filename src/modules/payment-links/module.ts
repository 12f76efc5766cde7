import { defineModule } from '../module.ts';
import type { PaymentsDeps } from '../payments/service.ts';
import { paymentLinkPageRoutes } from './page-routes.ts';
import { paymentLinkRoutes } from './routes.ts';
import { PaymentLinkSchema } from './schema.ts';
import type { PaymentLinksDeps } from './service.ts';

/**
 * Payment links: the merchant's links (`/v1/payment-links`) and their public page (`/pay/<id>`), which makes a
 * payment through the payments module on each use. Completed payments are counted on the link by the trigger in
 * sql/mpay_count_link_payment.sql.
 */
export const paymentLinksModule = defineModule({
  name: 'payment-links',
  owns: ['payment_links'],
  calls: ['checkout', 'events', 'merchants', 'payments', 'reference'],
  start: ({ config, db, clock }, needs: { payments: PaymentsDeps }) => {
    const deps: PaymentLinksDeps = { db, clock, public_base_url: config.public_base_url, payments: needs.payments };
    return {
      deps,
      schemas: { shared: [PaymentLinkSchema] },
      routes: async (server) => {
        await server.register(paymentLinkRoutes, { deps });
        await server.register(paymentLinkPageRoutes, { deps });
      },
    };
  },
});
