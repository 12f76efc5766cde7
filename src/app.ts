import type { Registry } from 'prom-client';
import multipart from '@fastify/multipart';
import pino, { type Logger } from 'pino';
import type { TSchema } from 'typebox';
import type { Config } from './config.ts';
import { ping, type DatabaseHandle } from './db/database.ts';
import { purgeExpiredIdempotencyKeys } from './http/idempotency.ts';
import { createMetrics } from './http/metrics.ts';
import { MemoryAuthCounters, PostgresAuthCounters, type AuthCounters } from './http/auth-counters.ts';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from './http/rate-limit.ts';
import { createServer, type App } from './http/server.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { archivalModule } from './modules/archival/module.ts';
import { auditModule } from './modules/audit/module.ts';
import { balanceModule } from './modules/balance/module.ts';
import type { BalanceDeps } from './modules/balance/service.ts';
import { buyOrdersModule } from './modules/buy-orders/module.ts';
import { checkoutModule } from './modules/checkout/module.ts';
import { dashboardModule } from './modules/dashboard/module.ts';
import { csrfTokenFor } from './modules/dashboard/users.ts';
import { disputesModule } from './modules/disputes/module.ts';
import { eventsModule } from './modules/events/module.ts';
import { fxModule } from './modules/fx/module.ts';
import { ledgerModule } from './modules/ledger/module.ts';
import { reconciliationModule } from './modules/reconciliation/module.ts';
import type { Ledger } from './modules/ledger/port.ts';
import { liquidityModule } from './modules/liquidity/module.ts';
import { merchantsModule } from './modules/merchants/module.ts';
import type { ResolvedSecrets } from './modules/merchants/secrets.ts';
import type { MerchantsDeps } from './modules/merchants/service.ts';
import type { ModuleContext, ModuleParts } from './modules/module.ts';
import { paymentLinksModule } from './modules/payment-links/module.ts';
import { paymentsModule } from './modules/payments/module.ts';
import { receiptsModule } from './modules/receipts/module.ts';
import type { PaymentsDeps } from './modules/payments/service.ts';
import type { VerdictDeps } from './modules/payments/verdicts.ts';
import type { BuyOrdersDeps } from './modules/buy-orders/service.ts';
import type { DisputesDeps } from './modules/disputes/service.ts';
import type { MatcherDeps } from './modules/payouts/matcher.ts';
import { payoutsModule } from './modules/payouts/module.ts';
import type { SellOrdersDeps } from './modules/sell-orders/service.ts';
import { pendingFundsModule } from './modules/pending-funds/module.ts';
import { referenceModule } from './modules/reference/module.ts';
import { refundsModule } from './modules/refunds/module.ts';
import type { RefundsDeps } from './modules/refunds/service.ts';
import { sandboxModule } from './modules/sandbox/module.ts';
import { sellOrdersModule } from './modules/sell-orders/module.ts';
import { settlementsModule } from './modules/settlements/module.ts';
import { validatorsModule } from './modules/validators/module.ts';
import type { ReceiptValidator } from './modules/validators/port.ts';
import type { DispatcherDeps, WebhookDispatcher } from './modules/webhooks/dispatcher.ts';
import type { WebhooksDeps } from './modules/webhooks/endpoints.ts';
import { webhooksModule } from './modules/webhooks/module.ts';
import { Scheduler } from './workers/scheduler.ts';

/** The outbound side as tests and the benchmark reach it: each order module's deps and the matcher's. */
export interface Payouts {
  sell_orders: SellOrdersDeps;
  buy_orders: BuyOrdersDeps;
  disputes: DisputesDeps;
  matcher: MatcherDeps;
}

export interface ApplicationOptions {
  config: Config;
  database: DatabaseHandle;
  clock?: Clock;
  logger?: Logger;
  /** Tests swap ports for doubles (a validator that fails, a broken ledger). */
  overrides?: { validator?: ReceiptValidator; ledger?: Ledger };
}

export interface Application {
  config: Config;
  database: DatabaseHandle;
  clock: Clock;
  logger: Logger;
  secrets: ResolvedSecrets;
  /** The HTTP server (built for every role set; it listens only with the api role). */
  app: App;
  /** Every metric of the process: the HTTP server's `/metrics`, or a worker's metrics server (METRICS_PORT). */
  metrics: Registry;
  scheduler: Scheduler;
  payments: PaymentsDeps;
  /** The verdict worker's dependencies (payments + validator + its alert log and metric). */
  verdicts: VerdictDeps;
  validator: ReceiptValidator;
  /** The PAY ledger port (in-process, or HTTP with LEDGER_URL). */
  ledger: Ledger;
  /** Sell orders, buy orders, the matcher and disputes (tests call their worker functions directly). */
  payouts: Payouts;
  /** The refunds module's dependencies (tests run its sweepers directly). */
  refunds: RefundsDeps;
  /** The balance module's dependencies (tests run its hourly recalculation directly). */
  balance: BalanceDeps;
  /** The merchants module's dependencies (first-start bootstrap and the benchmark create merchants with them). */
  merchants: MerchantsDeps;
  /** Webhook endpoints' deps (secret box, SSRF switch), the dispatcher's, and the worker's dispatcher. */
  webhooks: { deps: WebhooksDeps; dispatch: DispatcherDeps; dispatcher: WebhookDispatcher };
  /** Failed-authentication and sign-in counters (the rate limits' store: Redis, else PostgreSQL; memory on PGlite). */
  auth_counters: AuthCounters;
  close(): Promise<void>;
}

/**
 * The composition root: config -> database -> modules -> http -> workers. Each module's `start` takes the ports it
 * needs and returns the ones it offers, so the modules start lowest first; then their routes (in the order of the
 * OpenAPI document), jobs, schemas and readiness checks are collected by one loop each.
 */
export async function createApplication(options: ApplicationOptions): Promise<Application> {
  const { config, database } = options;
  const db = database.db;
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? pino({ level: config.log_level });
  database.logConnectionErrors((error) =>
    logger.warn({ err: error }, 'a database connection was lost outside a query; the pool replaces it'),
  );
  const limiter: RateLimiter = config.redis_url
    ? new RedisRateLimiter(
        { live: config.rate_limit_live_per_second, sandbox: config.rate_limit_sandbox_per_second },
        config.redis_url,
        (error) =>
          logger.warn(
            { err: error },
            'rate-limit store unavailable; the in-process limiter takes over until Redis answers again',
          ),
        { timeout_ms: config.redis_timeout_ms },
      )
    : new MemoryRateLimiter({ live: config.rate_limit_live_per_second, sandbox: config.rate_limit_sandbox_per_second });
  // one budget of failed authentications and sign-ins for every api process: Redis, else PostgreSQL (memory on PGlite)
  const auth_counters: AuthCounters =
    limiter instanceof RedisRateLimiter
      ? limiter
      : database.kind === 'postgres'
        ? new PostgresAuthCounters(db)
        : new MemoryAuthCounters();
  const metrics = createMetrics();
  const scheduler = new Scheduler(logger);
  const context: ModuleContext = {
    config,
    db,
    clock,
    logger,
    registry: metrics.registry,
    auth_counters,
    listen: (channel, on_message) => database.listen(channel, on_message),
    commits: database.commits,
    wake: (job) => scheduler.wake(job),
  };

  // Lowest first: each module gets the ports it needs from the ones started before it.
  const events = await eventsModule.start(context, {});
  const audit = await auditModule.start(context, {});
  const validators = await validatorsModule.start(context, { override: options.overrides?.validator });
  const reference = await referenceModule.start(context, {});
  const ledger = await ledgerModule.start(context, { override: options.overrides?.ledger });
  const webhooks = await webhooksModule.start(context, {});
  const merchants = await merchantsModule.start(context, { webhooks: webhooks.setup });
  const liquidity = await liquidityModule.start(context, { ledger: ledger.ledger });
  const fx = await fxModule.start(context, {});
  const payments = await paymentsModule.start(context, {
    ledger: ledger.ledger,
    validator: validators.validator,
    quote_locks: fx.quote_locks,
    banks: reference.banks,
  });
  const checkout = await checkoutModule.start(context, { payments: payments.deps, banks: reference.banks });
  const payment_links = await paymentLinksModule.start(context, { payments: payments.deps });
  const receipts = await receiptsModule.start(context, {});
  const settlements = await settlementsModule.start(context, {});
  const pending_funds = await pendingFundsModule.start(context, {
    ledger: ledger.ledger,
    validator: validators.validator,
  });
  const balance = await balanceModule.start(context, { ledger: ledger.ledger });
  const buy_orders = await buyOrdersModule.start(context, {});
  const disputes = await disputesModule.start(context, { ledger: ledger.ledger });
  const sell_orders = await sellOrdersModule.start(context, {
    ledger: ledger.ledger,
    validator: validators.validator,
    banks: reference.banks,
    on_cash_leg_failure: disputes.on_cash_leg_failure,
  });
  const payouts = await payoutsModule.start(context, { ledger: ledger.ledger });
  const refunds = await refundsModule.start(context, {
    ledger: ledger.ledger,
    validator: validators.validator,
    banks: reference.banks,
    sell_orders: sell_orders.deps,
  });
  const sandbox = await sandboxModule.start(context, { completion: payments.deps.completion });
  const archival = await archivalModule.start(context, {});
  const reconciliation = await reconciliationModule.start(context, {});
  const dashboard = await dashboardModule.start(context, {
    key_cache: merchants.key_cache,
    payments: { ...payments.deps, banks: reference.banks },
    payment_links: payment_links.deps,
    refunds: refunds.deps,
    sandbox: sandbox.deps,
    webhooks: webhooks.deps,
    pending_funds: pending_funds.deps,
    balance: balance.deps,
    sell_orders: sell_orders.deps,
    buy_orders: buy_orders.deps,
    disputes: disputes.deps,
    settlements: settlements.deps,
  });

  // In the order their routes appear in the OpenAPI document.
  const modules: ModuleParts[] = [
    merchants,
    liquidity,
    ledger,
    pending_funds,
    balance,
    reference,
    webhooks,
    sandbox,
    checkout,
    payment_links,
    receipts,
    settlements,
    fx,
    sell_orders,
    buy_orders,
    disputes,
    payouts,
    payments,
    refunds,
    dashboard,
    events,
    validators,
    audit,
    archival,
    reconciliation,
  ];
  const shared_schemas: TSchema[] = modules.flatMap((module) => module.schemas?.shared ?? []);
  const document_schemas: Record<string, TSchema> = Object.assign(
    {},
    ...modules.map((module) => module.schemas?.document ?? {}),
  );

  const app = await createServer({
    config,
    authenticator: merchants.authenticator,
    limiter,
    auth_counters,
    metrics: metrics.registry,
    readiness: async () => {
      await ping(db);
      return Object.assign(
        { database: { ok: true } },
        ...modules.map((module) => module.readiness?.() ?? {}),
        limiter.health ? { rate_limit: limiter.health() } : {},
      );
    },
    shared_schemas,
    upload: { file_max_bytes: config.proof_max_bytes, csrfTokenFor },
    document: { schemas: document_schemas, webhooks: events.webhooks_section },
    routes: async (server) => {
      await server.register(multipart, { limits: { fileSize: config.proof_max_bytes, files: 1 } });
      for (const module of modules) await module.routes?.(server);
    },
  });

  for (const module of modules) for (const job of module.jobs ?? []) scheduler.add(job);
  scheduler.add({
    name: 'idempotency-purge',
    interval_ms: 3600_000,
    run: async () => {
      await purgeExpiredIdempotencyKeys(db, clock);
      return 0;
    },
  });

  return {
    auth_counters,
    config,
    database,
    clock,
    logger,
    secrets: merchants.secrets,
    app,
    metrics: metrics.registry,
    scheduler,
    payments: payments.deps,
    verdicts: payments.verdicts,
    validator: validators.validator,
    ledger: ledger.ledger,
    payouts: {
      sell_orders: sell_orders.deps,
      buy_orders: buy_orders.deps,
      disputes: disputes.deps,
      matcher: payouts.matcher,
    },
    refunds: refunds.deps,
    balance: balance.deps,
    merchants: merchants.deps,
    webhooks: { deps: webhooks.deps, dispatch: webhooks.dispatch, dispatcher: webhooks.dispatcher },
    async close() {
      events.stopWaking();
      await webhooks.stopListening?.();
      await scheduler.stop();
      await webhooks.dispatcher.drain();
      await app.close();
      await limiter.close();
    },
  };
}
