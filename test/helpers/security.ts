/**
 * Machinery for the shared security suite (test/security/common-routes.test.ts), in the manner of Unkey's
 * `runCommonRouteTests`: every operation in `/openapi.json` is probed by its declared `security`.
 *
 * HOW TO EXTEND
 * - A new credential kind (for example a merchant JWT carrying `mode: sandbox`): add it to `Credentials` and
 *   `credentialsFor`, then list it in `WRONG_CREDENTIALS` under each scheme that must refuse it.
 * - A new route with a path parameter: add a row to `FIXTURES` (matched by path prefix, longest first). A row
 *   names how merchant A creates the resource (`create`) and what merchant B must get (`cross`); `pending` rows
 *   are listed as todo until someone writes their factory. An operation that matches no row fails the suite with
 *   "add a fixture for ...", so routes added later are covered or flagged.
 * - A route restricted to one mode: `sandbox_only` is read from the path (/v1/sandbox/*); list live-only routes
 *   in `LIVE_ONLY` (the OpenAPI document does not carry `config.mode`).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { multipart, multipartParts, uniquePng } from './files.ts';
import {
  buyBody,
  createBuy,
  createSell,
  fund,
  merchantCall,
  PAY,
  receipt as payoutReceipt,
  sellBody,
} from './orders.ts';
import { completedPayments, drainVerdicts } from './payments.ts';
import { receipt, createPendingFunds } from './pending-funds.ts';
import { newSlip } from './slips.ts';
import { ADMIN_TOKEN, INTERNAL_TOKEN, thbSeller, type TestApp, type TestMerchant } from './app.ts';

/** `apiKeyOrMerchant`: an operation that takes a secret API key, a merchant JWT or a session alike. */
export type Scheme =
  | 'apiKey'
  | 'apiKeyOrMerchant'
  | 'merchantJwt'
  | 'sellerKey'
  | 'adminToken'
  | 'internalToken'
  | 'public';

export interface Operation {
  method: string;
  path: string;
  scheme: Scheme;
  hidden: boolean;
  body_schema: Schema | undefined;
  /** The operation requires an `Idempotency-Key` header (the suite sends a fresh one, so a case reaches auth and ownership). */
  idempotency_key: boolean;
}

type Schema = Record<string, any>;

/** Every operation of the document, with its first security scheme naming its kind of caller. */
export function operationsOf(doc: Schema): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Schema>(doc['paths'])) {
    for (const [method, op] of Object.entries<Schema>(item)) {
      const security: Record<string, unknown>[] = op['security'] ?? [];
      const schemes = security.flatMap((requirement) => Object.keys(requirement));
      const scheme = (
        security.length === 0
          ? 'public'
          : schemes.includes('apiKey') && schemes.includes('merchantJwt')
            ? 'apiKeyOrMerchant'
            : schemes[0]
      ) as Scheme;
      const body_schema = op['requestBody']?.content?.['application/json']?.schema;
      const parameters: Schema[] = (op['parameters'] ?? []).map((parameter: Schema) =>
        resolveParameter(doc, parameter),
      );
      const idempotency_key = parameters.some(
        (parameter) =>
          parameter['in'] === 'header' &&
          String(parameter['name']).toLowerCase() === 'idempotency-key' &&
          parameter['required'] === true,
      );
      operations.push({
        method: method.toUpperCase(),
        path,
        scheme,
        hidden: Boolean(op['x-hidden'] ?? op['hide']),
        body_schema: body_schema ? resolve(doc, body_schema) : undefined,
        idempotency_key,
      });
    }
  }
  return operations;
}

function resolveParameter(doc: Schema, parameter: Schema): Schema {
  const ref = parameter['$ref'];
  return typeof ref === 'string'
    ? doc['components']['parameters'][ref.replace(/^#\/components\/parameters\//, '')]
    : parameter;
}

function resolve(doc: Schema, schema: Schema): Schema {
  const ref = schema['$ref'];
  if (typeof ref !== 'string') return schema;
  const name = ref.replace(/^#\/components\/schemas\//, '');
  return resolve(doc, doc['components']['schemas'][name]);
}

/** A minimal body that passes the schema, so a request fails on auth or ownership rather than validation. */
export function minimalBody(schema: Schema | undefined): unknown {
  if (!schema) return undefined;
  if (schema['const'] !== undefined) return schema['const'];
  if (Array.isArray(schema['enum'])) return schema['enum'][0];
  const alternatives = schema['anyOf'] ?? schema['oneOf'];
  if (Array.isArray(alternatives)) return minimalBody(alternatives[0]);
  if (Array.isArray(schema['allOf']))
    return Object.assign({}, ...schema['allOf'].map((part: Schema) => minimalBody(part)));
  const type = Array.isArray(schema['type']) ? schema['type'][0] : schema['type'];
  switch (type) {
    case 'object': {
      const body: Record<string, unknown> = {};
      for (const name of schema['required'] ?? []) body[name] = minimalBody(schema['properties']?.[name]);
      // `minProperties` (e.g. a PATCH needs one field): add optional fields, booleans first (always valid).
      const optional = Object.entries<Schema>(schema['properties'] ?? {})
        .filter(([name]) => !(name in body))
        .sort(([, x], [, y]) => Number(y['type'] === 'boolean') - Number(x['type'] === 'boolean'));
      for (const [name, property] of optional.slice(
        0,
        Math.max(0, (schema['minProperties'] ?? 0) - Object.keys(body).length),
      ))
        body[name] = minimalBody(property);
      return body;
    }
    case 'array':
      return Array.from({ length: schema['minItems'] ?? 0 }, () => minimalBody(schema['items']));
    case 'integer':
    case 'number':
      return schema['minimum'] ?? (schema['exclusiveMinimum'] !== undefined ? schema['exclusiveMinimum'] + 1 : 1);
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'string': {
      if (schema['format'] === 'uuid') return '00000000-0000-4000-8000-000000000000';
      if (schema['format'] === 'uri') return 'https://example.com/';
      if (schema['format'] === 'date-time') return '2026-01-01T00:00:00.000Z';
      if (schema['pattern'] === '^\\d+(\\.\\d{1,2})?$') return '1.00';
      return 'x'.repeat(Math.max(1, schema['minLength'] ?? 1));
    }
    default:
      return {};
  }
}

/** The credentials the suite sends. Add a kind here (and to WRONG_CREDENTIALS) to probe it everywhere. */
export interface Credentials {
  none: Record<string, string>;
  api_key_live: Record<string, string>;
  api_key_sandbox: Record<string, string>;
  api_key_as_bearer: Record<string, string>;
  merchant_jwt: Record<string, string>;
  /** The key of the seller that stands beside the merchant in the suite (`sel_live_…`). */
  seller_key: Record<string, string>;
  admin: Record<string, string>;
  admin_wrong_role: Record<string, string>;
  admin_no_actor: Record<string, string>;
  internal: Record<string, string>;
}

export function credentialsFor(merchant: TestMerchant, seller_key: string): Credentials {
  return {
    none: {},
    api_key_live: { 'x-api-key': merchant.live },
    api_key_sandbox: { 'x-api-key': merchant.sandbox },
    api_key_as_bearer: { authorization: `Bearer ${merchant.live}` },
    merchant_jwt: { authorization: `Bearer ${merchant.jwt}` },
    seller_key: { 'x-api-key': seller_key },
    admin: { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-actor-user-id': 'ops-1', 'x-actor-role': 'super_admin' },
    admin_wrong_role: { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-actor-user-id': 'ops-1', 'x-actor-role': 'support' },
    admin_no_actor: { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-actor-role': 'super_admin' },
    internal: { authorization: `Bearer ${INTERNAL_TOKEN}` },
  };
}

/** The right credential of each scheme, for merchant-owned cases. */
export const RIGHT_CREDENTIAL: Record<Exclude<Scheme, 'public'>, keyof Credentials> = {
  apiKey: 'api_key_live',
  apiKeyOrMerchant: 'api_key_live',
  merchantJwt: 'merchant_jwt',
  sellerKey: 'seller_key',
  adminToken: 'admin',
  internalToken: 'internal',
};

/** What each scheme must answer to a credential of another kind (docs/security.md, contract section 5). */
export const WRONG_CREDENTIALS: Record<Exclude<Scheme, 'public'>, [keyof Credentials, number, string][]> = {
  apiKey: [
    ['merchant_jwt', 401, 'UNAUTHORIZED'],
    ['seller_key', 403, 'FORBIDDEN'],
    ['admin', 401, 'UNAUTHORIZED'],
    ['internal', 401, 'UNAUTHORIZED'],
  ],
  apiKeyOrMerchant: [
    ['seller_key', 403, 'FORBIDDEN'],
    ['admin', 401, 'UNAUTHORIZED'],
    ['internal', 401, 'UNAUTHORIZED'],
  ],
  merchantJwt: [
    ['api_key_live', 401, 'UNAUTHORIZED'],
    ['api_key_as_bearer', 401, 'UNAUTHORIZED'],
    ['seller_key', 401, 'UNAUTHORIZED'],
    ['admin', 401, 'UNAUTHORIZED'],
    ['internal', 401, 'UNAUTHORIZED'],
  ],
  // A merchant's key on a seller route is the wrong kind of key (403); anything else is no seller key at all.
  sellerKey: [
    ['api_key_live', 403, 'FORBIDDEN'],
    ['api_key_sandbox', 403, 'FORBIDDEN'],
    ['api_key_as_bearer', 403, 'FORBIDDEN'],
    ['merchant_jwt', 401, 'UNAUTHORIZED'],
    ['admin', 401, 'UNAUTHORIZED'],
    ['internal', 401, 'UNAUTHORIZED'],
  ],
  adminToken: [
    ['api_key_as_bearer', 401, 'UNAUTHORIZED'],
    ['merchant_jwt', 401, 'UNAUTHORIZED'],
    ['internal', 401, 'UNAUTHORIZED'],
    ['admin_wrong_role', 403, 'ADMIN_FORBIDDEN'],
    ['admin_no_actor', 403, 'ADMIN_FORBIDDEN'],
  ],
  internalToken: [
    ['admin', 401, 'UNAUTHORIZED'],
    ['api_key_as_bearer', 401, 'UNAUTHORIZED'],
    ['merchant_jwt', 401, 'UNAUTHORIZED'],
  ],
};

/** Bodies the schema cannot describe (multipart uploads, base64 content), by `METHOD /path`. */
export const BODIES: Record<string, () => { payload: Buffer | object; headers: Record<string, string> }> = {
  'POST /v1/payments/{id}/proof': () => multipart('proof', uniquePng(), 'slip.png', 'image/png'),
  'POST /v1/refunds/{id}/proof': () => multipart('proof', uniquePng(), 'slip.png', 'image/png'),
  'POST /v1/pending-funds/{id}/receiver-confirm': () => ({ payload: receipt(), headers: {} }),
  'POST /v1/merchant-sell-orders/{id}/confirm-cash-leg': () => ({
    payload: { receipt_base64: payoutReceipt(), content_type: 'application/pdf' },
    headers: {},
  }),
};

/** Routes declared `mode: 'live_only'` in their route config (not visible in the OpenAPI document). */
export const LIVE_ONLY = new Set(['POST /v1/pending-funds/{id}/receiver-confirm']);

export function isSandboxOnly(operation: Operation): boolean {
  return operation.path.startsWith('/v1/sandbox/');
}

export interface FixtureContext {
  t: TestApp;
  a: TestMerchant;
  b: TestMerchant;
  /** The seller beside merchant A (the seller routes' resource owner). */
  seller_a: { id: string; seller_key: string };
}

export interface Fixture {
  /** Path prefix before the parameter, e.g. '/v1/payments/'. */
  prefix: string;
  /** Creates merchant A's resource with the given API key (live unless told) and returns its id. */
  create?: (context: FixtureContext, mode: 'live' | 'sandbox') => Promise<string>;
  /** What merchant B (or A's other mode) gets: the contract's named code, else 404 NOT_FOUND. */
  cross: [number, string];
  /** The mode the resource is made in (live unless told). */
  home_mode?: 'live' | 'sandbox';
  /** Where A re-reads the resource when there is no `GET prefix/{id}` (a list; the row is found by id). */
  read?: (id: string) => string;
  /** Per-operation exceptions to `cross`, by `METHOD /path`. */
  cross_by_operation?: Record<string, [number, string]>;
  /** The resource exists in live mode only (no sandbox fixture to make). */
  live_only?: boolean;
  /** The credential A re-reads the resource with (default: its API key of the resource's mode). */
  read_with?: keyof Credentials;
  /** Factories not written yet: the cases are listed as todo, never silently skipped. */
  pending?: string;
}

const key = (merchant: TestMerchant, mode: 'live' | 'sandbox') => (mode === 'live' ? merchant.live : merchant.sandbox);

async function created(response: Promise<LightMyRequestResponse>, what: string): Promise<string> {
  const answer = await response;
  assert.equal(answer.statusCode, 201, `fixture ${what}: ${answer.body}`);
  return answer.json().data.id;
}

let order_number = 0;

async function createPayment({ t, a }: FixtureContext, mode: 'live' | 'sandbox', path: string): Promise<string> {
  await t.createSeller(thbSeller(1_000_000, '35.00'));
  return created(
    t.call('POST', path, key(a, mode), {
      order_id: `sec-${++order_number}`,
      amount: 10_000,
      currency: 'THB',
      return_url: 'https://shop.example/return',
    }),
    path,
  );
}

/** A refund of A's completed payment in `mode`, waiting for its claim (requires_action). */
async function createRefund({ t, a }: FixtureContext, mode: 'live' | 'sandbox'): Promise<string> {
  await t.createSeller(thbSeller(1_000_000, '35.00'));
  const [payment_id] = await completedPayments(t, key(a, mode), [
    { order_id: `sec-${++order_number}`, amount: 10_000 },
  ]);
  return created(
    t.request({
      method: 'POST',
      url: `/v1/payments/${payment_id}/refunds`,
      headers: { 'x-api-key': key(a, mode), 'idempotency-key': randomUUID() },
    }),
    'refund',
  );
}

/**
 * A live payment whose one leg waits for seller A's word (a slip_qr verdict): the other sellers are switched off
 * while it is matched, then switched back on. Returns the payment's id (the leg is its first, `match_order` 1).
 */
async function createWaitingLeg({ t, a, seller_a }: FixtureContext): Promise<string> {
  const others = await t.db
    .updateTable('sellers')
    .set({ active: false })
    .where('id', '!=', seller_a.id)
    .where('active', '=', true)
    .returning('id')
    .execute();
  try {
    const id = await created(
      t.call('POST', '/v1/trades', a.live, {
        order_id: `sec-${++order_number}`,
        amount: 10_000,
        currency: 'THB',
        return_url: 'https://shop.example/return',
      }),
      'payment for a seller leg',
    );
    const { payload, headers } = multipartParts([{ name: 'proof', value: newSlip().bytes }]);
    const upload = await t.request({
      method: 'POST',
      url: `/v1/payments/${id}/proof`,
      payload,
      headers: { ...headers, 'x-api-key': a.live },
    });
    assert.equal(upload.statusCode, 200, `fixture seller leg proof: ${upload.body}`);
    await drainVerdicts(t);
    return id;
  } finally {
    if (others.length)
      await t.db
        .updateTable('sellers')
        .set({ active: true })
        .where(
          'id',
          'in',
          others.map((row) => row.id),
        )
        .execute();
  }
}

/** Path-parameter fixtures, matched by prefix (longest first). */
export const FIXTURES: Fixture[] = [
  {
    prefix: '/v1/payments/',
    cross: [404, 'NOT_FOUND'],
    create: (context, mode) => createPayment(context, mode, '/v1/payments'),
  },
  {
    prefix: '/v1/trades/',
    cross: [404, 'NOT_FOUND'],
    create: (context, mode) => createPayment(context, mode, '/v1/trades'),
  },
  {
    prefix: '/v1/payment-links/',
    cross: [404, 'NOT_FOUND'],
    create: ({ t, a }, mode) =>
      created(
        t.call('POST', '/v1/payment-links', key(a, mode), { title: 'Security', currency: 'THB', amount: 100 }),
        'payment link',
      ),
  },
  {
    prefix: '/v1/refunds/',
    cross: [404, 'NOT_FOUND'],
    create: createRefund,
  },
  {
    prefix: '/v1/sandbox/refunds/',
    cross: [404, 'NOT_FOUND'],
    home_mode: 'sandbox',
    read: (id) => `/v1/refunds?limit=100#${id}`,
    create: (context) => createRefund(context, 'sandbox'),
  },
  {
    // Seller B (the other seller key) is told the leg does not exist; A's merchant reads the payment unchanged.
    prefix: '/v1/seller/legs/',
    cross: [404, 'NOT_FOUND'],
    live_only: true,
    read: (id) => `/v1/payments?limit=100#${id}`,
    read_with: 'api_key_live',
    create: createWaitingLeg,
  },
  {
    // Seller A's endpoint: seller B's key is told it does not exist; A's list shows it unchanged.
    prefix: '/v1/seller/webhook-endpoints/',
    cross: [404, 'NOT_FOUND'],
    live_only: true,
    read: (id) => `/v1/seller/webhook-endpoints#${id}`,
    read_with: 'seller_key',
    create: ({ t, seller_a }) =>
      created(
        t.request({
          method: 'POST',
          url: '/v1/seller/webhook-endpoints',
          headers: { 'x-api-key': seller_a.seller_key },
          payload: { url: `https://hooks.example/seller-${++order_number}` },
        }),
        'seller webhook endpoint',
      ),
  },
  {
    prefix: '/v1/webhook-endpoints/',
    cross: [404, 'NOT_FOUND'],
    create: ({ t, a }, mode) =>
      created(
        t.call('POST', '/v1/webhook-endpoints', key(a, mode), {
          url: `https://hooks.example/${++order_number}`,
          enabled_events: ['payment.completed'],
        }),
        'webhook endpoint',
      ),
  },
  {
    prefix: '/v1/fx/quote-locks/',
    cross: [404, 'NOT_FOUND'],
    create: async ({ t, a }, mode) => {
      const price = await t.admin('PUT', '/admin/fx/reference-prices', { base: 'PAY', quote: 'THB', price: '35.50' });
      assert.equal(price.statusCode, 200, price.body);
      return created(t.call('POST', '/v1/fx/quote-locks', key(a, mode), { currency: 'THB' }), 'quote lock');
    },
  },
  { prefix: '/v1/merchants/', cross: [403, 'FORBIDDEN'], create: async ({ a }) => a.id },
  {
    prefix: '/v1/merchant-sell-orders/',
    cross: [403, 'SELL_ORDER_NOT_OWNER'],
    read_with: 'merchant_jwt',
    live_only: true,
    create: async ({ t, a }) => {
      await fund(t, a.id, 10 * PAY);
      return (await createSell(t, a.jwt, sellBody(10 * PAY))).id;
    },
  },
  {
    prefix: '/v1/merchant-buy-orders/',
    // What the routes answer today; the contract names no code for buy orders (mechanisms unifies the rule).
    cross: [403, 'FORBIDDEN'],
    read_with: 'merchant_jwt',
    live_only: true,
    create: async ({ t, a }) => (await createBuy(t, a.jwt, buyBody(PAY, 'USD', 100))).id,
  },
  {
    prefix: '/v1/merchant-disputes/',
    cross: [403, 'GATEWAY_DISPUTE_CROSS_MERCHANT'],
    read_with: 'merchant_jwt',
    live_only: true,
    create: async ({ t, a }) => {
      await fund(t, a.id, PAY);
      const sell = await createSell(t, a.jwt, sellBody(PAY, 'USD', 100));
      return created(
        merchantCall(t, a.jwt, 'POST', '/v1/merchant-disputes', {
          sell_order_id: sell.id,
          notes: 'security suite fixture',
        }),
        'dispute',
      );
    },
  },
  {
    prefix: '/v1/pending-funds/',
    // The contract names PENDING_FUNDS_NOT_RECEIVER for receiver-confirm only; the read (not in the contract) is 404.
    cross: [403, 'PENDING_FUNDS_NOT_RECEIVER'],
    cross_by_operation: { 'GET /v1/pending-funds/{id}': [404, 'NOT_FOUND'] },
    live_only: true,
    create: async ({ t, a }) => {
      const response = await createPendingFunds(t, a.id);
      assert.equal(response.statusCode, 201, `fixture pending funds: ${response.body}`);
      return response.json().data.id;
    },
  },
  {
    prefix: '/v1/settlements/',
    cross: [404, 'NOT_FOUND'],
    create: async ({ t, a }, mode) => {
      await t.createSeller(thbSeller(1_000_000, '35.00'));
      const [payment_id] = await completedPayments(t, key(a, mode), [
        { order_id: `sec-${++order_number}`, amount: 10_000 },
      ]);
      t.clock.advance(60_000);
      const run = await t.admin('POST', '/admin/settlements/run');
      assert.equal(run.statusCode, 200, `fixture settlement run: ${run.body}`);
      const batch = (run.json().data.batches as { id: string; merchant_id: string; is_sandbox: boolean }[]).find(
        (row) => row.merchant_id === a.id && row.is_sandbox === (mode === 'sandbox'),
      );
      assert.ok(batch, `fixture settlement: no ${mode} batch for payment ${payment_id}: ${run.body}`);
      return batch.id;
    },
  },
  {
    // Deliveries come from sandbox events here (`POST /v1/sandbox/events`), so the resource lives in sandbox mode.
    prefix: '/v1/webhook-deliveries/',
    cross: [404, 'NOT_FOUND'],
    home_mode: 'sandbox',
    read: (id) => `/v1/webhook-deliveries?limit=100#${id}`,
    create: async ({ t, a }) => {
      await created(
        t.call('POST', '/v1/webhook-endpoints', a.sandbox, {
          url: `https://hooks.example/${++order_number}`,
          enabled_events: ['sell_order.completed'],
        }),
        'webhook endpoint',
      );
      const event = await t.call('POST', '/v1/sandbox/events', a.sandbox, { type: 'sell_order.completed' });
      assert.ok(event.statusCode < 300, `fixture sandbox event: ${event.body}`);
      const list = await t.call('GET', '/v1/webhook-deliveries?limit=1', a.sandbox);
      const id = list.json().data[0]?.id;
      assert.ok(id, `fixture webhook delivery: ${list.body}`);
      return id;
    },
  },
];

export function fixtureFor(path: string): Fixture | undefined {
  return [...FIXTURES]
    .sort((x, y) => y.prefix.length - x.prefix.length)
    .find((fixture) => path.startsWith(fixture.prefix));
}

export function hasPathParameter(path: string): boolean {
  return /\{[^}]+\}/.test(path);
}

/** The resource's id in every parameter but a fill's number (`{n}`) and a leg's (`{match_order}`): its first. */
export function fill(path: string, id: string): string {
  return path.replace(/\{(n|match_order)\}/g, '1').replace(/\{[^}]+\}/g, id);
}

export function assertErrorEnvelope(response: LightMyRequestResponse, status: number, code: string): void {
  assert.equal(response.statusCode, status, `${status} ${code} expected, got ${response.statusCode}: ${response.body}`);
  const body = response.json();
  assert.equal(body.success, false, response.body);
  assert.equal(body.error?.code, code, response.body);
  assert.equal(typeof body.error?.message, 'string', response.body);
}
