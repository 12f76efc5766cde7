import { defineModule } from '../module.ts';
import { ledgerAdminRoutes } from './admin-routes.ts';
import { createLedgerFromConfig } from './factory.ts';
import { accounts, type Ledger } from './port.ts';
import { ledgerServiceRoutes } from './routes.ts';
import { collectingShortfalls } from './shortfalls.ts';
import { openIssuanceAccounts } from './supply.ts';

/** The PAY ledger port (in-process, or HTTP with LEDGER_URL), its service API and the operator's adjustments. */
export const ledgerModule = defineModule({
  name: 'ledger',
  owns: [
    'ledger_accounts',
    'ledger_transfers',
    'ledger_issuance_stripes',
    'pay_shortfalls',
    'pay_shortfall_collections',
  ],
  calls: ['audit'],
  start: async ({ config, db, clock }, needs: { override?: Ledger | undefined }) => {
    const adapter = needs.override ?? createLedgerFromConfig(config, { db, clock });
    // What the other modules use: every credit of a merchant's available account first pays back what it owes.
    const ledger = collectingShortfalls(adapter, { db, clock });
    // The default mint source exists from the first start (docs/payouts.md); an HTTP ledger opens it on first use.
    if (adapter.kind === 'in_process') {
      await openIssuanceAccounts(db, clock, [
        accounts.mintSource(config.ledger_mint_source_account, false),
        accounts.mintSource(config.ledger_mint_source_account, true),
      ]);
    }
    return {
      ledger,
      routes: async (server) => {
        // The ledger service's own API, in the process that holds the ledger (not in one that calls it over HTTP).
        if (config.roles.has('ledger') && !config.ledger_url)
          await server.register(ledgerServiceRoutes, { ledger: adapter });
        await server.register(ledgerAdminRoutes, { deps: { db, clock, ledger } });
      },
    };
  },
});
