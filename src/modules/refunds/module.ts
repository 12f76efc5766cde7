import type { Ledger } from '../ledger/port.ts';
import { defineModule } from '../module.ts';
import type { BankDirectory } from '../reference/banks.ts';
import type { SellOrdersDeps } from '../sell-orders/service.ts';
import type { ReceiptValidator } from '../validators/port.ts';
import { claimRoutes } from './claim-routes.ts';
import { refundRoutes } from './routes.ts';
import { RefundSchema } from './schema.ts';
import type { RefundsDeps } from './service.ts';
import { followRefundPayout } from './payout.ts';
import { sweepRefunds } from './sweep.ts';

/**
 * Refunds (DESIGN 3c): created on a payment that received money, sent where the buyer says (the claim page), paid by
 * the merchant's own transfer (its slip checked like any) or from its PAY through the payout network.
 */
export const refundsModule = defineModule({
  name: 'refunds',
  owns: ['refunds', 'refund_proofs'],
  calls: ['events', 'ledger', 'merchants', 'payments', 'reference', 'sell-orders', 'validators'],
  start: (
    { config, db, clock, wake },
    needs: { ledger: Ledger; validator: ReceiptValidator; banks: BankDirectory; sell_orders: SellOrdersDeps },
  ) => {
    const deps: RefundsDeps = {
      db,
      clock,
      public_base_url: config.public_base_url,
      ledger: needs.ledger,
      banks: needs.banks,
      validator: needs.validator,
      claim_days: config.refund_claim_days,
      confirm_days: config.refund_confirm_days,
      sell_orders: needs.sell_orders,
      onDestinationKnown: () => wake('order-matcher'),
    };
    // Sell orders sit below refunds: a refund's payout tells its refund how it ended through this port.
    needs.sell_orders.onRefundPayoutEnded = async (trx, order, at) => {
      await followRefundPayout(deps, trx, order, at);
    };
    return {
      deps,
      schemas: { shared: [RefundSchema] },
      jobs: [{ name: 'refund-sweep', interval_ms: config.worker_poll_interval_ms * 5, run: () => sweepRefunds(deps) }],
      routes: async (server) => {
        await server.register(refundRoutes, { deps, proof_max_bytes: config.proof_max_bytes });
        await server.register(claimRoutes, { deps });
      },
    };
  },
});
