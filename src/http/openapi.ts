import { createHash } from 'node:crypto';
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { TSchema } from 'typebox';
import { ERROR_CODES, type ErrorCode } from '../lib/errors.ts';
import { ERROR_STATUS } from './errors.ts';
import { hasEntityTag } from './conventions.ts';
import type { AuthKind } from './principal.ts';
import { present } from '../lib/assert.ts';
import {
  DEPRECATED_WITH_SUNSET,
  EXTRA_RESPONSES,
  HTML_ROUTES,
  IDEMPOTENCY,
  type Json,
  OPERATION_IDS,
  OPTIONAL_BODIES,
  REQUEST_EXAMPLES,
  RESPONSE_EXAMPLES,
  TAGS,
} from './openapi-operations.ts';

/**
 * The OpenAPI document as a product, decorated in one place: every route's operationId, its error responses built
 * from the closed code list (Unkey's openapi_responses.ts), the standard response headers, `Idempotency-Key` where it
 * applies, the declared tags and the `webhooks` section. Route files state only what is theirs (`config.errors`:
 * the codes or statuses a route can answer beyond the common ones; `config.operation_id` to name a new operation).
 */

type Operation = Json & {
  responses?: Record<string, Json>;
  parameters?: Json[];
  tags?: string[];
  operationId?: string;
};

const SUCCESS_TEXT: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
  '204': 'No content',
  '503': 'Not ready',
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Missing or invalid credential',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict or bad state',
  410: 'Gone',
  413: 'Payload too large',
  429: 'Rate limited',
  500: 'Internal error',
  502: 'A dependency (the ledger) is unavailable',
  503: 'Service unavailable',
};

export interface RouteDoc {
  key: string;
  auth: AuthKind;
  errors: (number | ErrorCode)[];
  mode: string | undefined;
  rate_limited: boolean;
  has_params: boolean;
  html: boolean;
  /** Single-resource GET: `ETag` on 200, `If-None-Match` -> 304 (conventions.ts). */
  etag: boolean;
  operation_id: string | undefined;
  /** An upload route that also takes JSON (its `multipart_body` aside): the JSON body's schema. */
  json_body: Json | undefined;
}

/** The JSON body of an upload route that takes either: its schema without the `null` that stands for multipart. */
function jsonBodyOf(route: RouteOptions): Json | undefined {
  const body = (route.schema as { body?: unknown } | undefined)?.body;
  if (!route.config?.multipart_body || !body) return undefined;
  const schema = JSON.parse(JSON.stringify(body)) as Json;
  const variants = ((schema['anyOf'] as Json[] | undefined) ?? [schema]).filter(
    (variant) => variant['type'] !== 'null',
  );
  return variants.length === 1 ? variants[0] : { anyOf: variants };
}

/** `/v1/payments/:id` -> `/v1/payments/{id}`, as OpenAPI names paths. */
export function openapiPath(url: string): string {
  return url.replace(/:(\w+)/g, '{$1}');
}

/** The error codes a route can answer, per status: the common ones from its credential, then what it declares. */
export function errorCodesByStatus(route: RouteDoc): Map<number, ErrorCode[]> {
  // Any route may find the database unavailable or too slow (503).
  const codes = new Set<ErrorCode>(['VALIDATION_ERROR', 'INTERNAL', 'SERVICE_UNAVAILABLE']);
  if (route.rate_limited) codes.add('RATE_LIMITED');
  if (route.auth !== 'public') codes.add('UNAUTHORIZED');
  if (route.auth === 'admin') codes.add('ADMIN_FORBIDDEN');
  // A dashboard user's session without a money role may only read the merchant routes (http/auth.ts).
  if ((route.auth === 'merchant' || route.auth === 'key_or_merchant') && !route.key.startsWith('GET '))
    codes.add('FORBIDDEN');
  // Merchant and seller credentials never cross: a seller key on a key route, a merchant key on a seller route.
  if (route.auth === 'key' || route.auth === 'key_or_merchant' || route.auth === 'seller') codes.add('FORBIDDEN');
  if (route.mode === 'sandbox_only' || route.mode === 'live_only') codes.add('SANDBOX_ONLY');
  if (route.has_params) codes.add('NOT_FOUND');
  for (const entry of route.errors) {
    if (typeof entry === 'string') codes.add(entry);
    else for (const code of ERROR_CODES) if (ERROR_STATUS[code] === entry) codes.add(code);
  }
  const by_status = new Map<number, ErrorCode[]>();
  for (const code of ERROR_CODES) {
    if (!codes.has(code)) continue;
    const status = ERROR_STATUS[code];
    by_status.set(status, [...(by_status.get(status) ?? []), code]);
  }
  return by_status;
}

function derivedOperationId(method: string, path: string): string {
  const words = path
    .split('/')
    .filter((part) => part && part !== 'v1')
    .map((part) => (part.startsWith('{') ? `by-${part.slice(1, -1)}` : part))
    .join('-')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return [method.toLowerCase(), ...words.map((word) => word.charAt(0).toUpperCase() + word.slice(1))].join('');
}

const HEADERS: Record<string, Json> = {
  XRequestId: {
    description: 'The request id (echoed from a plain `X-Request-Id` the caller sent, else generated)',
    schema: { type: 'string' },
  },
  RateLimit: {
    description: "IETF RateLimit: remaining requests `r` and seconds to reset `t` in the caller's bucket",
    schema: { type: 'string' },
    example: '"live";r=99;t=1',
  },
  RateLimitPolicy: {
    description: 'IETF RateLimit-Policy: quota `q` per window `w` seconds',
    schema: { type: 'string' },
    example: '"live";q=100;w=1',
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  IdempotentReplayed: {
    description: '`true` when this is the stored response of an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
  Deprecation: { description: 'When this operation was deprecated (`@<unix seconds>`)', schema: { type: 'string' } },
  Sunset: { description: 'When this operation stops working (HTTP date)', schema: { type: 'string' } },
  Link: {
    description: 'The successor operation (`</v1/trades>; rel="successor-version"`)',
    schema: { type: 'string' },
  },
  WWWAuthenticate: {
    description: 'The credential this route expects (RFC 9110)',
    required: true,
    schema: { type: 'string' },
    example: 'Bearer realm="mpay"',
  },
  ETag: {
    description: 'Entity tag of the representation; send it back as `If-None-Match` to get 304',
    schema: { type: 'string' },
  },
};

const PARAMETERS: Record<string, Json> = {
  IdempotencyKeyRequired: {
    name: 'Idempotency-Key',
    in: 'header',
    required: true,
    description:
      'A UUID: a retry with the same key and body replays the stored response (`Idempotent-Replayed: true`); another body is 409 IDEMPOTENCY_KEY_CONFLICT. Kept 7 days.',
    schema: { type: 'string', format: 'uuid' },
    example: '4f6c1e0a-3b2d-4c5e-8f9a-0b1c2d3e4f5a',
  },
  IdempotencyKeyOptional: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      '1 to 255 visible ASCII characters (a UUID is best): a retry with the same key and body replays the stored response; another body is 409 IDEMPOTENCY_KEY_CONFLICT. Kept 7 days.',
    schema: { type: 'string', minLength: 1, maxLength: 255 },
    example: '4f6c1e0a-3b2d-4c5e-8f9a-0b1c2d3e4f5a',
  },
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'An ETag from an earlier response: 304 Not Modified when the resource has not changed',
    schema: { type: 'string' },
  },
};

const ERROR_DETAIL: Json = {
  type: 'object',
  description: 'One problem: for validation errors, one per failing field with the values it allows',
  required: ['message'],
  properties: {
    field: { type: 'string', description: 'Where: `body.amount`, `query.limit`, `headers.idempotency-key`' },
    message: { type: 'string' },
    allowed: { type: 'array', items: {}, description: 'The values the field accepts, when it is an enumeration' },
  },
};

const ref = (kind: 'headers' | 'parameters' | 'schemas', name: string) => ({ $ref: `#/components/${kind}/${name}` });

function errorResponse(status: number, codes: ErrorCode[], html: boolean): Json {
  const schema = {
    type: 'object',
    description: 'Every non-2xx response (DESIGN.md: Error body)',
    required: ['success', 'error'],
    properties: {
      success: { type: 'boolean', const: false },
      error: {
        type: 'object',
        required: ['code', 'message', 'details'],
        properties: {
          code: { type: 'string', enum: codes, description: 'Machine-readable code from the closed list' },
          message: { type: 'string' },
          details: { type: 'array', items: ref('schemas', 'ErrorDetail') },
        },
      },
    },
  };
  const example = { success: false, error: { code: codes[0], message: STATUS_TEXT[status] ?? 'Error', details: [] } };
  return {
    description: `${STATUS_TEXT[status] ?? 'Error'}: ${codes.map((code) => `\`${code}\``).join(', ')}`,
    content: {
      'application/json': { schema, example },
      ...(html ? { 'text/html': { schema: { type: 'string' } } } : {}),
    },
  };
}

/** Error responses are the same on many routes: each distinct one is stored once under components.responses, named by its codes. */
class SharedResponses {
  private readonly names = new Map<string, string>();
  private readonly store: Json;
  constructor(store: Json) {
    this.store = store;
  }

  add(codes: ErrorCode[], response: Json): Json {
    const key = JSON.stringify(response);
    let name = this.names.get(key);
    if (!name) {
      const pascal = (code: string) =>
        code.toLowerCase().replace(/(^|_)(\w)/g, (_match, _sep, letter: string) => letter.toUpperCase());
      const base =
        codes.length <= 2
          ? codes.map(pascal).join('Or')
          : `${pascal(present(codes[0], 'the route declares codes'))}And${codes.length - 1}More`;
      name = base in this.store ? `${base}_${createHash('sha256').update(key).digest('hex').slice(0, 6)}` : base;
      this.store[name] = response;
      this.names.set(key, name);
    }
    return { $ref: `#/components/responses/${name}` };
  }
}

/** Collects what the document needs from each route's config (call from an onRoute hook). */
export function describeRoute(route: RouteOptions): RouteDoc[] {
  const auth = route.config?.auth;
  if (!auth) return [];
  const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((method) => method !== 'HEAD');
  const schema = (route.schema ?? {}) as { produces?: string[] };
  return methods.map((method) => ({
    key: `${method} ${openapiPath(route.url)}`,
    auth,
    errors: (route.config?.errors ?? []) as (number | ErrorCode)[],
    mode: route.config?.mode,
    rate_limited: route.config?.rate_limit !== false,
    has_params: route.url.includes(':'),
    html: (schema.produces?.includes('text/html') ?? false) || HTML_ROUTES.has(`${method} ${openapiPath(route.url)}`),
    etag: hasEntityTag(method, route.url),
    operation_id: route.config?.operation_id,
    json_body: jsonBodyOf(route),
  }));
}

/**
 * Decorates the generated document (swagger's `transformObject`): operationIds, error responses per status from the
 * code list, response headers, `Idempotency-Key`, tags, extra schemas by name and the `webhooks` section.
 */
export function decorateDocument(
  document: Json,
  routes: ReadonlyMap<string, RouteDoc>,
  extras: { schemas: Record<string, TSchema>; webhooks: Json },
): Json {
  const components = (document['components'] ??= {}) as Json;
  components['headers'] = { ...(components['headers'] as Json | undefined), ...HEADERS };
  components['parameters'] = { ...(components['parameters'] as Json | undefined), ...PARAMETERS };
  const schemas = (components['schemas'] ??= {}) as Json;
  delete schemas['ErrorBody'];
  schemas['ErrorDetail'] = ERROR_DETAIL;
  for (const [name, schema] of Object.entries(extras.schemas)) schemas[name] ??= schema;
  document['tags'] = TAGS;
  document['webhooks'] = extras.webhooks;

  const shared_responses = new SharedResponses((components['responses'] ??= {}) as Json);
  const paths = (document['paths'] ?? {}) as Record<string, Record<string, Operation>>;
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const key = `${method.toUpperCase()} ${path}`;
      const route = routes.get(key);
      operation.operationId ??= route?.operation_id ?? OPERATION_IDS[key] ?? derivedOperationId(method, path);
      if (!route) continue;
      // A query parameter with a default may be left out (Fastify fills the default in).
      for (const parameter of operation.parameters ?? []) {
        if (parameter['in'] === 'query' && (parameter['schema'] as Json | undefined)?.['default'] !== undefined)
          parameter['required'] = false;
      }
      const responses = (operation.responses ??= {});
      for (const [status, response] of Object.entries(responses)) {
        if (response['description'] === 'Default Response') response['description'] = SUCCESS_TEXT[status] ?? 'Success';
      }
      if (responses['200']?.['description'] === 'Default Response' && !responses['200']['content'])
        delete responses['200'];
      Object.assign(responses, EXTRA_RESPONSES[key]);
      if (route.json_body) {
        const request_body = (operation['requestBody'] ??= { content: {} }) as Json;
        const content = (request_body['content'] ??= {}) as Json;
        content['application/json'] = { schema: route.json_body };
      }
      const example = REQUEST_EXAMPLES[key];
      const json_body = ((operation['requestBody'] as Json | undefined)?.['content'] as Json | undefined)?.[
        'application/json'
      ] as Json | undefined;
      if (example !== undefined && json_body) json_body['example'] = example;
      const response_example = RESPONSE_EXAMPLES[key];
      if (response_example !== undefined) {
        const success = Object.entries(responses).find(([status]) => status.startsWith('2'))?.[1];
        const success_json = (success?.['content'] as Json | undefined)?.['application/json'] as Json | undefined;
        if (success_json) success_json['example'] = response_example;
      }
      if (OPTIONAL_BODIES.has(key) && operation['requestBody']) (operation['requestBody'] as Json)['required'] = false;
      const error_codes = errorCodesByStatus(route);
      for (const [status, codes] of error_codes) {
        // a route that describes its own 503 (readiness) keeps it
        if (status === 503 && responses['503'] !== undefined) continue;
        responses[String(status)] = errorResponse(status, codes, route.html);
      }

      const idempotency = IDEMPOTENCY[key];
      if (idempotency) {
        operation.parameters = (operation.parameters ?? []).filter(
          (parameter) =>
            !(parameter['in'] === 'header' && String(parameter['name']).toLowerCase() === 'idempotency-key'),
        );
        operation.parameters.push(
          ref('parameters', idempotency === 'required' ? 'IdempotencyKeyRequired' : 'IdempotencyKeyOptional'),
        );
      }
      if (route.etag) {
        (operation.parameters ??= []).push(ref('parameters', 'IfNoneMatch'));
        responses['304'] = {
          description: 'Not modified: the `If-None-Match` tag still matches',
          headers: { ETag: ref('headers', 'ETag') },
        };
      }
      for (const [status, response] of Object.entries(responses)) {
        const headers: Json = {
          'X-Request-Id': ref('headers', 'XRequestId'),
          ...(response['headers'] as Json | undefined),
        };
        const code = Number(status);
        if (route.rate_limited && code !== 401)
          Object.assign(headers, {
            RateLimit: ref('headers', 'RateLimit'),
            'RateLimit-Policy': ref('headers', 'RateLimitPolicy'),
          });
        if (code === 429) headers['Retry-After'] = ref('headers', 'RetryAfter');
        if (code === 401) headers['WWW-Authenticate'] = ref('headers', 'WWWAuthenticate');
        if (route.etag && code === 200) headers['ETag'] = ref('headers', 'ETag');
        if (idempotency && code >= 200 && code < 300)
          headers['Idempotent-Replayed'] = ref('headers', 'IdempotentReplayed');
        if (DEPRECATED_WITH_SUNSET.has(key))
          Object.assign(headers, {
            Deprecation: ref('headers', 'Deprecation'),
            Sunset: ref('headers', 'Sunset'),
            Link: ref('headers', 'Link'),
          });
        response['headers'] = headers;
        const codes = error_codes.get(code);
        if (codes) responses[status] = shared_responses.add(codes, response);
      }
    }
  }
  return document;
}

/** Installs the onRoute hook that records each route for the document; returns the registry it fills. */
export function collectRouteDocs(app: FastifyInstance): Map<string, RouteDoc> {
  const routes = new Map<string, RouteDoc>();
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs')) return;
    for (const doc of describeRoute(route)) routes.set(doc.key, doc);
  });
  return routes;
}
