import type { Ledger } from '../ledger/port.ts';
import type { BankDirectory } from '../reference/banks.ts';
import { defineModule } from '../module.ts';
import type { ReceiptValidator } from '../validators/port.ts';
import { SellOrderSchema, sellOrderRoutes } from './routes.ts';
import { requestCashLegs } from './cash-leg.ts';
import { sweepSellOrders } from './close.ts';
import type { CashLegFailureHook, SellOrdersDeps } from './service.ts';

/** Sell orders (PAY reserved, matched, cash legs requested and confirmed), their cash-leg attempts and sweeper. */
export const sellOrdersModule = defineModule({
  name: 'sell-orders',
  owns: ['sell_orders', 'sell_order_cash_leg_attempts', 'merchant_payout_destinations'],
  calls: ['buy-orders', 'events', 'ledger', 'reference', 'validators'],
  start: (
    { config, db, clock },
    needs: {
      ledger: Ledger;
      validator: ReceiptValidator;
      banks: BankDirectory;
      on_cash_leg_failure?: CashLegFailureHook | undefined;
    },
  ) => {
    const deps: SellOrdersDeps = {
      db,
      clock,
      ledger: needs.ledger,
      validator: needs.validator,
      banks: needs.banks,
      pending_ttl_hours: config.sell_order_pending_ttl_hours,
      cash_leg_retry_max: config.cash_leg_retry_max,
      cash_leg_retry_timeout_hours: config.cash_leg_retry_timeout_hours,
      ...(needs.on_cash_leg_failure ? { onCashLegFailure: needs.on_cash_leg_failure } : {}),
    };
    const poll = config.worker_poll_interval_ms;
    return {
      deps,
      schemas: { document: { SellOrder: SellOrderSchema } },
      routes: async (server) => void (await server.register(sellOrderRoutes, { deps })),
      jobs: [
        { name: 'sell-order-cash-legs', interval_ms: poll, run: () => requestCashLegs(deps) },
        { name: 'sell-order-sweep', interval_ms: poll * 5, run: () => sweepSellOrders(deps) },
      ],
    };
  },
});
