import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { App } from '../../http/server.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Job } from '../../workers/scheduler.ts';
import { buyOrderRoutes } from '../buy-orders/routes.ts';
import { expireBuyOrders, type BuyOrdersDeps } from '../buy-orders/service.ts';
import { disputeRoutes } from '../disputes/routes.ts';
import { openCashLegFailureDispute, type DisputesDeps } from '../disputes/service.ts';
import { accounts, type Ledger } from '../ledger/port.ts';
import { sellOrderRoutes } from '../sell-orders/routes.ts';
import { requestCashLegs, sweepSellOrders, type SellOrdersDeps } from '../sell-orders/service.ts';
import type { ReceiptValidator } from '../validators/port.ts';
import { createMatcherMetrics, matcherReadiness, runMatcher, type MatcherDeps } from './matcher.ts';

export interface Payouts {
  sell_orders: SellOrdersDeps;
  buy_orders: BuyOrdersDeps;
  disputes: DisputesDeps;
  matcher: MatcherDeps;
  register(server: App): Promise<void>;
  jobs(poll_ms: number, wake: (name: string) => void): Job[];
  readiness(): { ok: boolean; detail: string };
}

/**
 * The outbound side (sell orders, buy orders, the FIFO matcher, disputes) assembled once for the composition root:
 * the auto-open dispute switch, the matcher's mint source and metrics, its routes and its worker jobs.
 */
export function createPayouts(options: { config: Config; db: Db; clock: Clock; ledger: Ledger; validator: ReceiptValidator; logger: Logger; registry: Registry }): Payouts {
  const { config, db, clock, ledger, validator, logger } = options;
  let wake: (name: string) => void = () => {};
  const sell_orders: SellOrdersDeps = {
    db,
    clock,
    ledger,
    validator,
    pending_ttl_hours: config.sell_order_pending_ttl_hours,
    cash_leg_retry_max: config.cash_leg_retry_max,
    cash_leg_retry_timeout_hours: config.cash_leg_retry_timeout_hours,
    ...(config.gateway_dispute_auto_open_enabled ? { onCashLegFailure: openCashLegFailureDispute } : {}),
  };
  const buy_orders: BuyOrdersDeps = { db, clock, pending_ttl_hours: config.buy_order_pending_ttl_hours };
  const disputes: DisputesDeps = { db, clock, ledger };
  const mint_source = config.ledger_mint_source_account;
  logger.info({ mint_source_accounts: [accounts.mintSource(mint_source, false), accounts.mintSource(mint_source, true)] }, 'sell/buy order matcher mints from these issuance accounts');
  const matcher: MatcherDeps = {
    db,
    clock,
    ledger,
    mint_source,
    logger,
    metrics: createMatcherMetrics(options.registry, mint_source),
    onMatched: () => wake('sell-order-cash-legs'),
  };
  return {
    sell_orders,
    buy_orders,
    disputes,
    matcher,
    async register(server) {
      await server.register(sellOrderRoutes, { deps: sell_orders });
      await server.register(buyOrderRoutes, { deps: buy_orders });
      await server.register(disputeRoutes, { deps: disputes });
    },
    jobs(poll_ms, wake_job) {
      wake = wake_job;
      return [
        { name: 'order-matcher', interval_ms: poll_ms, run: () => runMatcher(matcher) },
        { name: 'sell-order-cash-legs', interval_ms: poll_ms, run: () => requestCashLegs(sell_orders) },
        { name: 'sell-order-sweep', interval_ms: poll_ms * 5, run: () => sweepSellOrders(sell_orders) },
        { name: 'buy-order-expiry', interval_ms: poll_ms * 5, run: () => expireBuyOrders(buy_orders) },
      ];
    },
    // Only a process that runs the matcher can be held back by it.
    readiness: () => (config.roles.has('worker') ? matcherReadiness(matcher.mint_source) : { ok: true, detail: 'the matcher runs in worker processes' }),
  };
}
