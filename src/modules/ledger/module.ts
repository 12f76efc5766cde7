import { defineModule } from '../module.ts';
import { ledgerAdminRoutes } from './admin-routes.ts';
import { createLedgerFromConfig } from './factory.ts';
import { accounts, type Ledger } from './port.ts';
import { ledgerServiceRoutes } from './routes.ts';
import { openIssuanceAccounts } from './supply.ts';

/** The PAY ledger port (in-process, or HTTP with LEDGER_URL), its service API and the operator's adjustments. */
export const ledgerModule = defineModule({
  name: 'ledger',
  owns: ['ledger_accounts', 'ledger_transfers', 'ledger_issuance_stripes'],
  calls: ['audit'],
  start: async ({ config, db, clock }, needs: { override?: Ledger | undefined }) => {
    const ledger = needs.override ?? createLedgerFromConfig(config, { db, clock });
    // The default mint source exists from the first start (docs/payouts.md); an HTTP ledger opens it on first use.
    if (ledger.kind === 'in_process') {
      await openIssuanceAccounts(db, clock, [
        accounts.mintSource(config.ledger_mint_source_account, false),
        accounts.mintSource(config.ledger_mint_source_account, true),
      ]);
    }
    return {
      ledger,
      routes: async (server) => {
        // The ledger service's own API, in the process that holds the ledger (not in one that calls it over HTTP).
        if (config.roles.has('ledger') && !config.ledger_url) await server.register(ledgerServiceRoutes, { ledger });
        await server.register(ledgerAdminRoutes, { deps: { db, clock, ledger } });
      },
    };
  },
});
