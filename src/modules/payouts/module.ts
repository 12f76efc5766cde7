import { accounts, type Ledger } from '../ledger/port.ts';
import { defineModule } from '../module.ts';
import { createMatcherMetrics, matcherReadiness, runMatcher, type MatcherDeps } from './matcher.ts';

/**
 * The FIFO sell/buy matcher (price-time priority): pairs pending buy orders with sell orders, records the fills and
 * mints the buyers' PAY from the mint-source account. Its own tables: none (fills belong to buy orders).
 */
export const payoutsModule = defineModule({
  name: 'payouts',
  owns: [],
  calls: ['buy-orders', 'ledger', 'merchants', 'sell-orders'],
  start: ({ config, db, clock, logger, registry, wake }, needs: { ledger: Ledger }) => {
    const mint_source = config.ledger_mint_source_account;
    logger.info(
      { mint_source_accounts: [accounts.mintSource(mint_source, false), accounts.mintSource(mint_source, true)] },
      'sell/buy order matcher mints from these issuance accounts',
    );
    const matcher: MatcherDeps = {
      db,
      clock,
      ledger: needs.ledger,
      mint_source,
      logger,
      metrics: createMatcherMetrics(registry, mint_source),
      onMatched: () => wake('sell-order-cash-legs'),
    };
    return {
      matcher,
      jobs: [{ name: 'order-matcher', interval_ms: config.worker_poll_interval_ms, run: () => runMatcher(matcher) }],
      // Only a process that runs the matcher can be held back by it (read at each probe: a test unsets mint_source).
      readiness: () => ({
        matcher: config.roles.has('worker')
          ? matcherReadiness(matcher.mint_source)
          : { ok: true, detail: 'the matcher runs in worker processes' },
      }),
    };
  },
});
