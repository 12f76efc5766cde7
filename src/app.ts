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
import { createAuthenticator } from './modules/merchants/credentials.ts';
import { merchantsAdminRoutes } from './modules/merchants/routes.ts';
import { resolveServiceSecrets, type ResolvedSecrets } from './modules/merchants/secrets.ts';
import { noCompletionEffects } from './modules/payments/ports.ts';
import { PaymentSchema, paymentRoutes } from './modules/payments/routes.ts';
import { expireDuePayments, type PaymentsDeps } from './modules/payments/service.ts';
import { processProofVerdicts } from './modules/payments/verdicts.ts';
import { createBankDirectory } from './modules/reference/banks.ts';
import { referenceRoutes } from './modules/reference/routes.ts';
import { nullValidator } from './modules/validators/null-validator.ts';
import type { ReceiptValidator } from './modules/validators/port.ts';
import { Scheduler } from './workers/scheduler.ts';

export interface ApplicationOptions {
  config: Config;
  database: DatabaseHandle;
  clock?: Clock;
  logger?: Logger;
  /** Tests swap ports for doubles (a validator that fails, a broken ledger). */
  overrides?: { validator?: ReceiptValidator };
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
  validator: ReceiptValidator;
  close(): Promise<void>;
}

/** The composition root: config -> database -> modules -> http -> workers. */
export async function createApplication(options: ApplicationOptions): Promise<Application> {
  const { config, database } = options;
  const db = database.db;
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? pino({ level: config.log_level });
  const secrets = await resolveServiceSecrets(db, config);

  const limiter: RateLimiter = config.redis_url
    ? new RedisRateLimiter({ live: config.rate_limit_live_per_second, sandbox: config.rate_limit_sandbox_per_second }, config.redis_url)
    : new MemoryRateLimiter({ live: config.rate_limit_live_per_second, sandbox: config.rate_limit_sandbox_per_second });
  const metrics = createMetrics();
  const scheduler = new Scheduler(logger);

  const validator = options.overrides?.validator ?? nullValidator;
  const banks = createBankDirectory(db, clock);
  const payments: PaymentsDeps = {
    db,
    clock,
    public_base_url: config.public_base_url,
    completion: noCompletionEffects,
    onProofReceived: () => scheduler.wake('payment-verdicts'),
  };
  const merchants = { db, clock, secrets: secrets.secrets };

  const app = await createServer({
    config,
    authenticator: createAuthenticator({ db, clock, secrets: secrets.secrets }),
    limiter,
    metrics: metrics.registry,
    readiness: async () => {
      await ping(db);
      return { database: { ok: true } };
    },
    shared_schemas: [PaymentSchema],
    routes: async (server) => {
      await server.register(multipart, { limits: { fileSize: config.proof_max_bytes, files: 1 } });
      await server.register(merchantsAdminRoutes, { deps: merchants });
      await server.register(matchingRoutes, { db, clock });
      await server.register(referenceRoutes, { banks });
      await server.register(paymentRoutes, {
        deps: { ...payments, banks },
        proof_max_bytes: config.proof_max_bytes,
        create_gone_after_sunset: config.payments_create_gone_after_sunset,
      });
    },
  });

  const poll = config.worker_poll_interval_ms;
  scheduler.add({ name: 'payment-verdicts', interval_ms: poll, run: () => processProofVerdicts({ ...payments, validator }) });
  scheduler.add({ name: 'payment-expiry', interval_ms: poll * 5, run: () => expireDuePayments(payments) });
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
    validator,
    async close() {
      await scheduler.stop();
      await app.close();
      await limiter.close();
    },
  };
}
