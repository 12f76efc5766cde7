import type { AuthCounters } from '../http/auth-counters.ts';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { TSchema } from 'typebox';
import type { Config } from '../config.ts';
import type { DatabaseHandle, Db } from '../db/database.ts';
import type { Database } from '../db/schema.ts';
import type { App } from '../http/server.ts';
import type { Clock } from '../lib/clock.ts';
import type { Job } from '../workers/scheduler.ts';

export type ModuleName =
  | 'events'
  | 'audit'
  | 'validators'
  | 'reference'
  | 'ledger'
  | 'merchants'
  | 'webhooks'
  | 'liquidity'
  | 'fx'
  | 'payments'
  | 'checkout'
  | 'payment-links'
  | 'receipts'
  | 'settlements'
  | 'pending-funds'
  | 'buy-orders'
  | 'sell-orders'
  | 'balance'
  | 'disputes'
  | 'payouts'
  | 'refunds'
  | 'sandbox'
  | 'dashboard'
  | 'archival'
  | 'reconciliation';

export type TableName = keyof Database & string;

/** What the composition root hands every module when it starts. */
export interface ModuleContext {
  config: Config;
  db: Db;
  clock: Clock;
  logger: Logger;
  /** The process's metrics registry (a module may add its own metrics). */
  registry: Registry;
  /** Failed-authentication and sign-in counters, in the rate limits' store (shared by every api process). */
  auth_counters: AuthCounters;
  /** LISTEN on a channel (NOTIFY from the outbox, also across processes on PostgreSQL); returns the unlisten. */
  listen: DatabaseHandle['listen'];
  /** Listeners called after a commit that inserted into a table (the outbox wakes the dispatchers with it). */
  commits: DatabaseHandle['commits'];
  /** Runs a scheduled job at once (work one module makes due for another's job). */
  wake(job: string): void;
}

export interface ReadinessCheck {
  ok: boolean;
  detail?: string;
}

/** What a started module adds to the application: each part optional. */
export interface ModuleParts {
  /** Registers the module's Fastify plugins (app.ts calls these in one fixed order, the OpenAPI document's). */
  routes?(server: App): Promise<void>;
  /** The worker jobs it schedules. */
  jobs?: readonly Job[];
  /** Schemas it contributes to the OpenAPI document: shared ones (with an `$id`) and named component schemas. */
  schemas?: { shared?: readonly TSchema[]; document?: Readonly<Record<string, TSchema>> };
  /** Extra /readyz checks. */
  readiness?(): Record<string, ReadinessCheck>;
}

/**
 * One module: its name, the tables it alone writes (their row types are in its `tables.ts`, their DDL in the one
 * ordered `src/db/migrations` folder), the modules it may import, and `start`, which takes the context and the
 * ports it needs (`Needs`) and returns the ports it offers (`Offers`) with its routes, jobs and schemas.
 * test/architecture checks `owns` against the migrated database and `calls` against the imports.
 */
export interface AppModule<Needs = object, Offers = object> {
  name: ModuleName;
  owns: readonly TableName[];
  calls: readonly ModuleName[];
  start(context: ModuleContext, needs: Needs): Promise<Offers & ModuleParts> | (Offers & ModuleParts);
}

export function defineModule<Needs, Offers>(module: AppModule<Needs, Offers>): AppModule<Needs, Offers> {
  return module;
}

/**
 * Tables outside the modules: the platform's own. `idempotency_keys` belongs to `src/http/idempotency.ts`, the
 * key-value `settings`, the `append_only_tables` list and `schema_sql_files` (src/db/repeatable.ts) to `src/db`.
 * Kysely's `schema_migrations` tables are the migrator's.
 */
export const PLATFORM_TABLES = {
  http: ['idempotency_keys', 'auth_counters'],
  db: ['settings', 'append_only_tables', 'schema_sql_files', 'schema_migrations', 'schema_migrations_lock'],
} as const;
