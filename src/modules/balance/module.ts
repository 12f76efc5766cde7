import type { Ledger } from '../ledger/port.ts';
import { defineModule } from '../module.ts';
import { balanceRoutes } from './routes.ts';
import { recalcBufferThresholds, type BalanceDeps } from './service.ts';

/** A merchant's PAY balance view, buffer threshold and deficit (ledger balances plus pending obligations). */
export const balanceModule = defineModule({
  name: 'balance',
  owns: ['merchant_balance_state'],
  calls: ['buy-orders', 'ledger', 'pending-funds', 'sell-orders'],
  start: ({ config, db, clock }, needs: { ledger: Ledger }) => {
    const deps: BalanceDeps = {
      db,
      clock,
      ledger: needs.ledger,
      apr_bps: config.balance_apr_bps,
      entry_fee_usd: config.balance_entry_fee_usd,
      grace_days: config.balance_deficit_grace_days,
      threshold_bps: config.balance_buffer_threshold_bps,
    };
    return {
      deps,
      routes: async (server) => void (await server.register(balanceRoutes, { deps })),
      jobs: [{ name: 'balance-recalc', interval_ms: 3600_000, run: () => recalcBufferThresholds(deps) }],
    };
  },
});
