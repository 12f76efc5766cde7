import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createApplication, type Application, type ApplicationOptions } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { openTestDatabase } from './database.ts';
import { mergeDocuments, OpenApiChecker } from './openapi-check.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
export const INTERNAL_TOKEN = 'test-internal-token-0123456789abcdef';
export const ADMIN_HEADERS = {
  authorization: `Bearer ${ADMIN_TOKEN}`,
  'x-actor-user-id': 'ops-1',
  'x-actor-role': 'super_admin',
};

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
  call(
    method: InjectOptions['method'],
    url: string,
    key: string | undefined,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
  admin(method: InjectOptions['method'], url: string, body?: unknown): Promise<LightMyRequestResponse>;
  createMerchant(name?: string): Promise<TestMerchant>;
  createSeller(body: Record<string, unknown>): Promise<{ id: string }>;
  /** The envelope of the one `type` event recorded about `resource_id` (throws when there is none). */
  event<Envelope = { data: Record<string, unknown> }>(resource_id: string, type: string): Promise<Envelope>;
  close(): Promise<void>;
}

/**
 * Starts the real application on a fresh database with a manual clock. Workers do not run on their own: tests
 * call the worker functions (or `scheduler.wake`) so that nothing depends on timing.
 */
export async function startTestApp(
  options: {
    env?: Record<string, string>;
    clock?: ManualClock;
    overrides?: ApplicationOptions['overrides'];
    database?: Awaited<ReturnType<typeof openTestDatabase>>;
  } = {},
): Promise<TestApp> {
  const database = options.database ?? (await openTestDatabase());
  const clock = options.clock ?? new ManualClock();
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    ADMIN_SERVICE_TOKEN: ADMIN_TOKEN,
    INTERNAL_SERVICE_TOKEN: INTERNAL_TOKEN,
    PUBLIC_BASE_URL: 'http://gateway.test',
    RATE_LIMIT_LIVE_PER_SECOND: '100000',
    RATE_LIMIT_SANDBOX_PER_SECOND: '100000',
    // Test receivers listen on loopback; the SSRF tests pass WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false'.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    // Suites move the clock by weeks and keep using the merchant JWT they started with; the cap has its own tests.
    JWT_MAX_LIFETIME_SECONDS: String(90 * 24 * 3600),
    RATE_LIMIT_FAILED_AUTH_PER_SECOND: '100000',
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...options.env,
  });
  const application = await createApplication({
    config,
    database,
    clock,
    ...(options.overrides ? { overrides: options.overrides } : {}),
  });
  await application.app.ready();

  const checker = await documentChecker(application);
  // Events already in a database handed in (a data-migration test's legacy rows) are not the application's.
  const { seq: events_before } = await database.db
    .selectFrom('events')
    .select((eb) => eb.fn.coalesce(eb.fn.max('seq'), eb.lit(0)).as('seq'))
    .executeTakeFirstOrThrow();
  const request = async (inject: InjectOptions) => {
    const response = await application.app.inject(inject);
    const url = typeof inject.url === 'string' ? inject.url : ((inject.path as string | undefined) ?? '');
    const problems = checker.check(
      (inject.method ?? 'GET').toUpperCase(),
      url,
      response.statusCode,
      response.headers,
      response.body,
    );
    if (problems.length > 0) throw new Error(`Response disagrees with the OpenAPI document:\n${problems.join('\n')}`);
    return response;
  };
  const call: TestApp['call'] = (method, url, key, body, headers = {}) =>
    request({
      method,
      url,
      headers: { ...(key ? { 'x-api-key': key } : {}), ...headers },
      ...(body === undefined ? {} : { payload: body as object }),
    });
  const admin: TestApp['admin'] = (method, url, body) =>
    request({ method, url, headers: ADMIN_HEADERS, ...(body === undefined ? {} : { payload: body as object }) });

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
    async event<Envelope>(resource_id: string, type: string) {
      const { payload } = await database.db
        .selectFrom('events')
        .select('payload')
        .where('resource_id', '=', resource_id)
        .where('type', '=', type)
        .executeTakeFirstOrThrow();
      return (typeof payload === 'string' ? JSON.parse(payload) : payload) as Envelope;
    },
    async close() {
      // Every event the file's tests recorded must match the document's webhooks section.
      const events = await database.db
        .selectFrom('events')
        .select('payload')
        .where('seq', '>', Number(events_before))
        .execute();
      const problems = events.flatMap((event) =>
        checker.checkEvent(typeof event.payload === 'string' ? JSON.parse(event.payload) : event.payload),
      );
      await application.close();
      await database.close();
      if (problems.length > 0)
        throw new Error(
          `Recorded events disagree with the OpenAPI webhooks section:\n${[...new Set(problems)].join('\n')}`,
        );
    },
  };
}

const checkers = new Map<string, OpenApiChecker>();

/** One checker per distinct document (test apps with other settings may serve another one). */
async function documentChecker(application: Application): Promise<OpenApiChecker> {
  const merchant = (await application.app.inject({ method: 'GET', url: '/openapi.json' })).body;
  const operator = (await application.app.inject({ method: 'GET', url: '/openapi-admin.json' })).body;
  const key = `${merchant}\n${operator}`;
  let checker = checkers.get(key);
  if (!checker)
    checkers.set(key, (checker = new OpenApiChecker(mergeDocuments(JSON.parse(merchant), JSON.parse(operator)))));
  return checker;
}

/** Every operation the server documents: the merchant document and the operator's as one. */
export async function allOperationsDocument(t: Pick<TestApp, 'request'>): Promise<Record<string, any>> {
  const merchant = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
  const operator = (await t.request({ method: 'GET', url: '/openapi-admin.json' })).json();
  return mergeDocuments(merchant, operator);
}

/** A live THB PromptPay seller with the given liquidity (minor units) and rate. */
export function thbSeller(liquidity_minor = 10_000_000, rate = '35.00', promptpay_id = '0812345678') {
  return {
    currency: 'THB',
    payment_method: 'promptpay',
    display_name: `Seller ${rate}`,
    liquidity_minor,
    rate,
    promptpay_id,
  };
}
