import multipart from '@fastify/multipart';
import pino, { type Logger } from 'pino';
import type { Config } from './config.ts';
import { ping, type DatabaseHandle } from './db/database.ts';
import { purgeExpiredIdempotencyKeys } from './http/idempotency.ts';
import { createMetrics } from './http/metrics.ts';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from './http/rate-limit.ts';
import { createServer, type App } from './http/server.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { matchingRoutes } from './modules/matching/routes.ts';
import { ApiKeyCache, createAuthenticator } from './modules/merchants/credentials.ts';
import type { MerchantsDeps } from './modules/merchants/service.ts';
import { merchantsAdminRoutes } from './modules/merchants/routes.ts';
import { resolveServiceSecrets, type ResolvedSecrets } from './modules/merchants/secrets.ts';
import { PaymentSchema, paymentRoutes } from './modules/payments/routes.ts';
import { expireDuePayments, type PaymentsDeps } from './modules/payments/service.ts';
import { openIssuanceAccounts } from './modules/ledger/supply.ts';
import { createVerdictMetrics, processProofVerdicts, type VerdictDeps } from './modules/payments/verdicts.ts';
import { createBankDirectory } from './modules/reference/banks.ts';
import { referenceRoutes } from './modules/reference/routes.ts';
import { createValidatorFromConfig } from './modules/validators/factory.ts';
import type { ReceiptValidator } from './modules/validators/port.ts';
import { Scheduler } from './workers/scheduler.ts';
import { checkoutRoutes } from './modules/checkout/routes.ts';
import { EVENTS_CHANNEL, wakeDispatchersAfterEventCommits } from './modules/events/outbox.ts';
import { sandboxRoutes } from './modules/sandbox/routes.ts';
import { WEBHOOK_FALLBACK_POLL_MS, WebhookDispatcher, type DispatcherDeps } from './modules/webhooks/dispatcher.ts';
import type { WebhooksDeps } from './modules/webhooks/endpoints.ts';
import { resolveWebhookSecretsKey, SecretBox, sealPlaintextSecrets } from './modules/webhooks/secret-box.ts';
import { webhookRoutes } from './modules/webhooks/routes.ts';
import { createPaymentCompletion, createSellerFunding } from './modules/ledger/effects.ts';
import { PaymentCreateBatcher } from './modules/payments/create-batch.ts';
import { createLedgerFromConfig } from './modules/ledger/factory.ts';
import { accounts, type Ledger } from './modules/ledger/port.ts';
import { ledgerServiceRoutes } from './modules/ledger/routes.ts';
import { ledgerAdminRoutes } from './modules/ledger/admin-routes.ts';
import { pendingFundsRoutes } from './modules/pending-funds/routes.ts';
import { sweepPendingFunds, type PendingFundsDeps } from './modules/pending-funds/service.ts';
import { balanceRoutes } from './modules/balance/routes.ts';
import { recalcBufferThresholds, type BalanceDeps } from './modules/balance/service.ts';
import { fxRoutes } from './modules/fx/routes.ts';
import { createQuoteLockPort } from './modules/fx/service.ts';
import { SettlementSchema, settlementRoutes } from './modules/settlements/routes.ts';
import { createPayouts, type Payouts } from './modules/order-matching/wiring.ts';
import { settlementJob, type SettlementsDeps } from './modules/settlements/service.ts';
import { webhooksSection } from './modules/events/catalog.ts';
import { SellOrderSchema } from './modules/sell-orders/routes.ts';
import { BuyOrderSchema } from './modules/buy-orders/routes.ts';
import { DisputeSchema } from './modules/disputes/routes.ts';
import { PendingFundsSchema } from './modules/pending-funds/routes.ts';
import { dashboardAdminRoutes } from './modules/dashboard/admin-routes.ts';
import { dashboardRoutes } from './modules/dashboard/routes.ts';

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
  scheduler: Scheduler;
  payments: PaymentsDeps;
  /** The verdict worker's dependencies (payments + validator + its alert log and metric). */
  verdicts: VerdictDeps;
  validator: ReceiptValidator;
  /** The PAY ledger port (in-process, or HTTP with LEDGER_URL). */
  ledger: Ledger;
  /** Sell orders, buy orders, the matcher and disputes (tests call their worker functions directly). */
  payouts: Payouts;
  /** The balance module's dependencies (tests run its hourly recalculation directly). */
  balance: BalanceDeps;
  /** The merchants module's dependencies (first-start bootstrap and the benchmark create merchants with them). */
  merchants: MerchantsDeps;
  /** Webhook endpoints' deps (secret box, SSRF switch), the dispatcher's, and the worker's dispatcher. */
  webhooks: { deps: WebhooksDeps; dispatch: DispatcherDeps; dispatcher: WebhookDispatcher };
  close(): Promise<void>;
}

/**
 * `null_validator` approves any image: the contract's choice where slips are checked elsewhere, but an operator must
 * see it when live payments run on it. Ready either way; the detail says so.
 */
function validatorReadiness(config: Config): Record<string, { ok: boolean; detail?: string }> {
  if (config.receipt_validator !== 'null_validator') return { receipt_validator: { ok: true, detail: config.receipt_validator } };
  return { receipt_validator: { ok: true, detail: 'warning: null_validator approves every live proof without checking it (RECEIPT_VALIDATOR=easyslip verifies slips)' } };
}

/** The composition root: config -> database -> modules -> http -> workers. */
export async function createApplication(options: ApplicationOptions): Promise<Application> {
  const { config, database } = options;
  const db = database.db;
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? pino({ level: config.log_level });
  const secrets = await resolveServiceSecrets(db, config);
  const box = new SecretBox(await resolveWebhookSecretsKey(db, config, logger));
  // Before anything serves: no webhook secret stays in plaintext (migration 0100 copies them as they were).
  await sealPlaintextSecrets(db, box);
  const webhooks: WebhooksDeps = { db, clock, box, allow_private_targets: config.webhook_allow_private_targets };

  const limiter: RateLimiter = config.redis_url
    ? new RedisRateLimiter({ live: config.rate_limit_live_per_second, sandbox: config.rate_limit_sandbox_per_second }, config.redis_url, (error) =>
        logger.warn({ err: error }, 'rate-limit store unavailable; the in-process limiter takes over until Redis answers again'),
      )
    : new MemoryRateLimiter({ live: config.rate_limit_live_per_second, sandbox: config.rate_limit_sandbox_per_second });
  const metrics = createMetrics();
  const scheduler = new Scheduler(logger);

  const validator = options.overrides?.validator ?? createValidatorFromConfig(config);
  const ledger = options.overrides?.ledger ?? createLedgerFromConfig(config, { db, clock });
  const seller_funding = createSellerFunding(ledger);
  const pending_funds: PendingFundsDeps = {
    db,
    clock,
    ledger,
    validator,
    max_attempts: config.receiver_confirm_max_attempts,
    ttl_hours: config.pending_funds_ttl_hours,
    window_hours: config.receiver_confirm_window_hours,
  };
  const balance: BalanceDeps = {
    db,
    clock,
    ledger,
    apr_bps: config.balance_apr_bps,
    entry_fee_usd: config.balance_entry_fee_usd,
    grace_days: config.balance_deficit_grace_days,
    threshold_bps: config.balance_buffer_threshold_bps,
  };
  const banks = createBankDirectory(db, clock);
  const payments: PaymentsDeps = {
    db,
    clock,
    public_base_url: config.public_base_url,
    completion: createPaymentCompletion(ledger),
    quote_locks: createQuoteLockPort(),
    onProofReceived: () => scheduler.wake('payment-verdicts'),
  };
  payments.create_batcher = new PaymentCreateBatcher(payments, { onBatchFailed: (error) => logger.warn({ err: error }, 'a batch of payment creates failed; each ran alone') });
  const key_cache = new ApiKeyCache();
  const merchants: MerchantsDeps = { db, clock, secrets: secrets.secrets, webhooks, key_cache, jwt_max_lifetime_seconds: config.jwt_max_lifetime_seconds };
  const settlements: SettlementsDeps = { db, clock, fee_bps: config.settlement_fee_bps };

  const payouts = createPayouts({ config, db, clock, ledger, validator, logger, registry: metrics.registry });
  // The default mint source exists from the first start (DESIGN "Buy order"); an HTTP ledger opens it on first use.
  if (ledger.kind === 'in_process') await openIssuanceAccounts(db, clock, [accounts.mintSource(config.ledger_mint_source_account, false), accounts.mintSource(config.ledger_mint_source_account, true)]);

  const app = await createServer({
    config,
    authenticator: createAuthenticator({ db, clock, secrets: secrets.secrets, key_cache, jwt_max_lifetime_seconds: config.jwt_max_lifetime_seconds }),
    limiter,
    metrics: metrics.registry,
    readiness: async () => {
      await ping(db);
      return { database: { ok: true }, matcher: payouts.readiness(), ...(limiter.health ? { rate_limit: limiter.health() } : {}), ...validatorReadiness(config) };
    },
    shared_schemas: [SettlementSchema, PaymentSchema],
    document: { schemas: { SellOrder: SellOrderSchema, BuyOrder: BuyOrderSchema, Dispute: DisputeSchema, PendingFunds: PendingFundsSchema }, webhooks: webhooksSection() },
    routes: async (server) => {
      await server.register(multipart, { limits: { fileSize: config.proof_max_bytes, files: 1 } });
      await server.register(merchantsAdminRoutes, { deps: merchants });
      await server.register(matchingRoutes, { db, clock, funding: seller_funding });
      // The ledger service's own API, in the process that holds the ledger (not in one that calls it over HTTP).
      if (config.roles.has('ledger') && !config.ledger_url) await server.register(ledgerServiceRoutes, { ledger });
      await server.register(ledgerAdminRoutes, { deps: { db, clock, ledger } });
      await server.register(pendingFundsRoutes, { deps: pending_funds });
      await server.register(balanceRoutes, { deps: balance });
      await server.register(referenceRoutes, { banks });
      await server.register(webhookRoutes, { deps: webhooks });
      await server.register(sandboxRoutes, { deps: { db, clock, public_base_url: config.public_base_url, settlement_fee_bps: config.settlement_fee_bps } });
      await server.register(checkoutRoutes, { deps: { ...payments, banks }, proof_max_bytes: config.proof_max_bytes });
      await server.register(settlementRoutes, { deps: settlements });
      await server.register(fxRoutes, { deps: { db, clock, lock_seconds: config.fx_quote_lock_seconds } });
      await payouts.register(server);
      await server.register(paymentRoutes, {
        deps: { ...payments, banks },
        proof_max_bytes: config.proof_max_bytes,
        create_gone_after_sunset: config.payments_create_gone_after_sunset,
      });
      // The merchant dashboard (issue 14): the same services as the API, behind dashboard sign-in.
      const users = { db, clock, public_base_url: config.public_base_url };
      await server.register(dashboardAdminRoutes, { deps: users });
      await server.register(dashboardRoutes, {
        deps: {
          users,
          key_cache,
          payments: { ...payments, banks },
          sandbox: { db, clock, public_base_url: config.public_base_url, settlement_fee_bps: config.settlement_fee_bps },
          webhooks,
          pending_funds,
          balance,
          sell_orders: payouts.sell_orders,
          buy_orders: payouts.buy_orders,
          disputes: payouts.disputes,
          settlements,
          secure_cookies: config.public_base_url.startsWith('https://'),
        },
      });
    },
  });

  const poll = config.worker_poll_interval_ms;
  const verdicts: VerdictDeps = { ...payments, validator, logger, completion_failures: createVerdictMetrics(metrics.registry) };
  scheduler.add({ name: 'payment-verdicts', interval_ms: poll, run: () => processProofVerdicts(verdicts) });
  const dispatch: DispatcherDeps = {
    db,
    clock,
    box,
    timeout_ms: config.webhook_timeout_ms,
    allow_private_targets: config.webhook_allow_private_targets,
    max_in_flight_per_endpoint: config.webhook_max_in_flight_per_endpoint,
    logger,
  };
  const dispatcher = new WebhookDispatcher({ ...dispatch, max_in_flight: config.webhook_max_in_flight, onSettled: () => scheduler.wake('webhook-dispatch') });
  // The short poll is the fallback for a wake-up that never came (a process that died between commit and NOTIFY)
  // and for retries that come due.
  scheduler.add({ name: 'webhook-dispatch', interval_ms: Math.min(poll, WEBHOOK_FALLBACK_POLL_MS), run: () => dispatcher.pass() });
  // New events wake the dispatcher at once: every process sends a NOTIFY after commits that wrote events (outside
  // the business transaction, coalesced), and a worker listens, also across processes on PostgreSQL.
  const stopWaking = wakeDispatchersAfterEventCommits(database, (error) => logger.warn({ err: error }, 'webhook wake-up NOTIFY failed; the dispatcher poll covers it'));
  const stopListening = config.roles.has('worker') ? await database.listen(EVENTS_CHANNEL, () => scheduler.wake('webhook-dispatch')) : undefined;
  scheduler.add({ name: 'payment-expiry', interval_ms: poll * 5, run: () => expireDuePayments(payments) });
  scheduler.add({ name: 'settlement-run', interval_ms: config.settlement_interval_seconds * 1000, run: () => settlementJob(settlements) });
  scheduler.add({ name: 'pending-funds-sweep', interval_ms: poll * 5, run: () => sweepPendingFunds(pending_funds) });
  scheduler.add({ name: 'balance-recalc', interval_ms: 3600_000, run: () => recalcBufferThresholds(balance) });
  for (const job of payouts.jobs(poll, (name) => scheduler.wake(name))) scheduler.add(job);
  scheduler.add({ name: 'idempotency-purge', interval_ms: 3600_000, run: async () => (await purgeExpiredIdempotencyKeys(db, clock), 0) });

  return {
    config,
    database,
    clock,
    logger,
    secrets,
    app,
    scheduler,
    payments,
    verdicts,
    validator,
    ledger,
    payouts,
    balance,
    merchants,
    webhooks: { deps: webhooks, dispatch, dispatcher },
    async close() {
      stopWaking();
      await stopListening?.();
      await scheduler.stop();
      await dispatcher.drain();
      await app.close();
      await limiter.close();
    },
  };
}
