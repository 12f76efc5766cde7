import { defineModule } from '../module.ts';
import { receiptRoutes } from './routes.ts';
import type { ReceiptsDeps } from './service.ts';

/**
 * Receipts: the number and token a payment gets when it completes or ends partly paid (the trigger
 * `payments_assign_receipt` in sql/mpay_assign_receipt.sql, in the completing transaction), and the printable page
 * `/receipts/<token>`, which shows the payment as it is now, refunds included.
 */
export const receiptsModule = defineModule({
  name: 'receipts',
  owns: ['receipt_sequences'],
  calls: ['checkout', 'merchants', 'payments', 'validators'],
  start: ({ config, db }) => {
    const deps: ReceiptsDeps = { db, public_base_url: config.public_base_url };
    return {
      deps,
      routes: async (server) => {
        await server.register(receiptRoutes, { deps });
      },
    };
  },
});
