import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createApplication, type Application, type ApplicationOptions } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { openTestDatabase } from './database.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
export const INTERNAL_TOKEN = 'test-internal-token-0123456789abcdef';
export const ADMIN_HEADERS = { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-actor-user-id': 'ops-1', 'x-actor-role': 'super_admin' };

export interface TestMerchant {
  id: string;
  name: string;
  live: string;
  test: string;
  sandbox: string;
  jwt: string;
  webhook_secret: string;
}

export interface TestApp {
  application: Application;
  clock: ManualClock;
  db: Application['database']['db'];
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
  /** Shorthand: JSON request with an API key (X-API-Key). */
  call(method: InjectOptions['method'], url: string, key: string | undefined, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  admin(method: InjectOptions['method'], url: string, body?: unknown): Promise<LightMyRequestResponse>;
  createMerchant(name?: string): Promise<TestMerchant>;
  createSeller(body: Record<string, unknown>): Promise<{ id: string }>;
  close(): Promise<void>;
}

/**
 * Starts the real application on a fresh database with a manual clock. Workers do not run on their own: tests
 * call the worker functions (or `scheduler.wake`) so that nothing depends on timing.
 */
export async function startTestApp(
  options: { env?: Record<string, string>; clock?: ManualClock; overrides?: ApplicationOptions['overrides'] } = {},
): Promise<TestApp> {
  const database = await openTestDatabase();
  const clock = options.clock ?? new ManualClock();
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    ADMIN_SERVICE_TOKEN: ADMIN_TOKEN,
    INTERNAL_SERVICE_TOKEN: INTERNAL_TOKEN,
    PUBLIC_BASE_URL: 'http://gateway.test',
    RATE_LIMIT_LIVE_PER_SECOND: '100000',
    RATE_LIMIT_SANDBOX_PER_SECOND: '100000',
    // Suites move the clock by weeks and keep using the merchant JWT they started with; the cap has its own tests.
    JWT_MAX_LIFETIME_SECONDS: String(90 * 24 * 3600),
    RATE_LIMIT_FAILED_AUTH_PER_SECOND: '100000',
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...options.env,
  });
  const application = await createApplication({ config, database, clock, ...(options.overrides ? { overrides: options.overrides } : {}) });
  await application.app.ready();

  const request = (inject: InjectOptions) => application.app.inject(inject);
  const call: TestApp['call'] = (method, url, key, body, headers = {}) =>
    request({ method, url, headers: { ...(key ? { 'x-api-key': key } : {}), ...headers }, ...(body === undefined ? {} : { payload: body as object }) });
  const admin: TestApp['admin'] = (method, url, body) => request({ method, url, headers: ADMIN_HEADERS, ...(body === undefined ? {} : { payload: body as object }) });

  return {
    application,
    clock,
    db: database.db,
    request,
    call,
    admin,
    async createMerchant(name = 'Test Merchant') {
      const response = await admin('POST', '/admin/merchants', { name });
      if (response.statusCode !== 201) throw new Error(`createMerchant: ${response.statusCode} ${response.body}`);
      const { merchant, api_keys, jwt, webhook_secret } = response.json().data;
      return { id: merchant.id, name, ...api_keys, jwt, webhook_secret };
    },
    async createSeller(body) {
      const response = await admin('POST', '/admin/sellers', body);
      if (response.statusCode !== 201) throw new Error(`createSeller: ${response.statusCode} ${response.body}`);
      return response.json().data;
    },
    async close() {
      await application.close();
      await database.close();
    },
  };
}

/** A live THB PromptPay seller with the given liquidity (minor units) and rate. */
export function thbSeller(liquidity_minor = 10_000_000, rate = '35.00', promptpay_id = '0812345678') {
  return { currency: 'THB', payment_method: 'promptpay', display_name: `Seller ${rate}`, liquidity_minor, rate, promptpay_id };
}
