/**
 * @mpay/client: a typed client for the mpay merchant payments API. Types come from the OpenAPI document
 * (`./run sdk:generate`); this file is the small hand-written fetch wrapper around them: named methods per
 * operation, an automatic Idempotency-Key on the POSTs that take one (the same key on every retry of a call),
 * retries with backoff on 429 and 5xx honouring Retry-After, typed errors, cursor iteration and webhook events.
 */
import { randomUUID } from 'node:crypto';
import { OPERATIONS, type OperationId } from './generated/operations.ts';
import type { components, operations } from './generated/schema.d.ts';
import { verifyWebhook as verifyRawWebhook, type HeaderBag, type RawBody, type VerifyOptions } from './webhooks.js';

export { OPERATIONS, type OperationId };
export type { components, operations };
export type Schemas = components['schemas'];
export type Payment = Schemas['Payment'];

type Operation<K extends OperationId> = operations[K];
type Parameters<K extends OperationId> = Operation<K> extends { parameters: infer P } ? P : never;
type Part<K extends OperationId, Name extends string> = Parameters<K> extends { [key in Name]?: infer V } ? ([V] extends [never] | [undefined] ? never : NonNullable<V>) : never;
type Body<K extends OperationId> = Operation<K> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type Json<R> = R extends { content: { 'application/json': infer J } } ? J : R extends { content: Record<string, unknown> } ? string : undefined;
type SuccessStatus = 200 | 201 | 202 | 204;

/** What an operation answers on success (the parsed JSON, or the text of a CSV or HTML body). */
export type Success<K extends OperationId> = {
  [S in keyof Operation<K>['responses']]: S extends SuccessStatus ? Json<Operation<K>['responses'][S]> : never;
}[keyof Operation<K>['responses']];

/** The request of one operation: path and query parameters, a JSON body, and call options. */
export type RequestInput<K extends OperationId> = {
  path?: Part<K, 'path'>;
  query?: Part<K, 'query'>;
  body?: Body<K>;
  /** Overrides the automatic key (POSTs that take one get a fresh UUID per call, kept across its retries). */
  idempotencyKey?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
};

/** A list operation's item type (`{data: [...], has_more, next_cursor}`). */
export type ListItem<K extends OperationId> = Success<K> extends { data: (infer T)[] } ? T : never;
export type ListOperationId = { [K in OperationId]: (typeof OPERATIONS)[K]['list'] extends true ? K : never }[OperationId];

type WebhookOperations = { [K in keyof operations as K extends `webhook_${string}` ? K : never]: operations[K] };
/** Every webhook event, discriminated by `type` (`payment.completed`, `sell_order.cash_leg_requested`, ...). */
export type WebhookEvent = {
  [K in keyof WebhookOperations]: WebhookOperations[K] extends { requestBody: { content: { 'application/json': infer E } } } ? E : never;
}[keyof WebhookOperations];
export type WebhookEventType = WebhookEvent['type'];

/** A non-2xx answer: the error body's `code`, the HTTP status and the request id to quote to support. */
export class MpayApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly request_id: string | undefined;
  readonly details: unknown[];
  readonly body: unknown;
  constructor(status: number, code: string, message: string, request_id: string | undefined, details: unknown[], body: unknown) {
    super(`${status} ${code}: ${message}`);
    this.name = 'MpayApiError';
    this.status = status;
    this.code = code;
    this.request_id = request_id;
    this.details = details;
    this.body = body;
  }
}

/** The server could not be reached (after the retries). */
export class MpayConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MpayConnectionError';
  }
}

export interface ClientOptions {
  baseUrl: string;
  /** `svc_live_…`, `svc_test_…` or `svc_sandbox_…` (sent as X-API-Key). */
  apiKey?: string;
  /** A merchant JWT or the admin/internal token (sent as Authorization: Bearer). */
  bearerToken?: string;
  /** Extra headers on every request (admin routes: X-Actor-User-Id, X-Actor-Role). */
  headers?: Record<string, string>;
  /** Retries after the first attempt, on 429, 5xx and network errors; default 3. */
  maxRetries?: number;
  /** First backoff when there is no Retry-After; doubles each time; default 200 ms. */
  retryBaseDelayMs?: number;
  /** Longest wait between attempts; default 30 s. */
  retryMaxDelayMs?: number;
  fetch?: typeof fetch;
  /** For tests: how to wait. */
  sleep?: (ms: number) => Promise<void>;
}

const RETRYABLE = new Set([429, 500, 502, 503, 504]);

function expandPath(template: string, path: Record<string, unknown> | undefined): string {
  return template.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const value = path?.[name];
    if (value === undefined) throw new TypeError(`missing path parameter "${name}" for ${template}`);
    return encodeURIComponent(String(value));
  });
}

function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return '';
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== null) search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** Retry-After in seconds or as an HTTP date, in milliseconds from now. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export class MpayClient {
  private readonly options: Required<Pick<ClientOptions, 'maxRetries' | 'retryBaseDelayMs' | 'retryMaxDelayMs'>> & ClientOptions;
  private readonly fetcher: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;

  /** One named method per operationId: `client.operations.createTrade({ body })`. */
  readonly operations: { [K in OperationId]: (input?: RequestInput<K>) => Promise<Success<K>> };

  constructor(options: ClientOptions) {
    this.options = { maxRetries: 3, retryBaseDelayMs: 200, retryMaxDelayMs: 30_000, ...options, baseUrl: options.baseUrl.replace(/\/+$/, '') };
    this.fetcher = options.fetch ?? fetch;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    const named: Record<string, (input?: RequestInput<OperationId>) => Promise<unknown>> = {};
    for (const id of Object.keys(OPERATIONS) as OperationId[]) named[id] = (input) => this.request(id, input as never);
    this.operations = named as never;
  }

  /** Calls one operation; resolves with its success body, throws MpayApiError (or MpayConnectionError). */
  async request<K extends OperationId>(operation: K, input: RequestInput<K> = {}): Promise<Success<K>> {
    const spec = OPERATIONS[operation];
    const url = `${this.options.baseUrl}${expandPath(spec.path, input.path as Record<string, unknown> | undefined)}${queryString(input.query as Record<string, unknown> | undefined)}`;
    const headers: Record<string, string> = { accept: 'application/json', ...this.options.headers, ...input.headers };
    if (this.options.apiKey) headers['x-api-key'] = this.options.apiKey;
    if (this.options.bearerToken) headers['authorization'] = `Bearer ${this.options.bearerToken}`;
    if (input.body !== undefined) headers['content-type'] = 'application/json';
    // One key per call, reused by every retry: a retry after a lost response replays instead of acting twice.
    const idempotency_key = spec.idempotency === 'none' ? undefined : (input.idempotencyKey ?? randomUUID());
    if (idempotency_key) headers['idempotency-key'] = idempotency_key;
    // A POST without a key is not safe to repeat after the server may have acted (5xx); 429 always is.
    const method: string = spec.method;
    const safe_to_repeat = method === 'GET' || method === 'PUT' || method === 'DELETE' || idempotency_key !== undefined;

    for (let attempt = 0; ; attempt += 1) {
      let response: Response;
      try {
        response = await this.fetcher(url, {
          method: spec.method,
          headers,
          ...(input.body === undefined ? {} : { body: JSON.stringify(input.body) }),
          ...(input.signal ? { signal: input.signal } : {}),
        });
      } catch (error) {
        if (input.signal?.aborted || !safe_to_repeat || attempt >= this.options.maxRetries) {
          throw new MpayConnectionError(`${spec.method} ${url}: ${(error as Error).message}`, { cause: error });
        }
        await this.sleep(this.backoff(attempt));
        continue;
      }
      if (response.ok) return (await this.parse(response)) as Success<K>;
      const retryable = response.status === 429 || (RETRYABLE.has(response.status) && safe_to_repeat);
      if (retryable && attempt < this.options.maxRetries) {
        await response.body?.cancel();
        await this.sleep(Math.min(retryAfterMs(response.headers.get('retry-after')) ?? this.backoff(attempt), this.options.retryMaxDelayMs));
        continue;
      }
      throw await this.error(response);
    }
  }

  /** Every item of a list operation, page after page: `for await (const payment of client.list('listPayments'))`. */
  async *list<K extends ListOperationId>(operation: K, input: RequestInput<K> = {}): AsyncGenerator<ListItem<K>, void, undefined> {
    let cursor: string | undefined;
    for (;;) {
      const query = { ...(input.query as Record<string, unknown> | undefined), ...(cursor ? { cursor } : {}) };
      const page = (await this.request(operation, { ...input, query } as RequestInput<K>)) as unknown as { data: ListItem<K>[]; has_more: boolean; next_cursor: string | null };
      for (const item of page.data) yield item;
      if (!page.has_more || !page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }

  /** Payments and trades (`POST /v1/trades` is the successor of the deprecated `POST /v1/payments`). */
  readonly payments = {
    create: (body: Body<'createTrade'>, options: Omit<RequestInput<'createTrade'>, 'body'> = {}) => this.request('createTrade', { ...options, body }),
    get: (id: string) => this.request('getPayment', { path: { id } }),
    list: (query: RequestInput<'listPayments'>['query'] = {}) => this.list('listPayments', { query }),
    cancel: (id: string) => this.request('cancelPayment', { path: { id } }),
    checkout: (id: string) => this.request('getPaymentCheckout', { path: { id } }),
  };

  readonly sellOrders = {
    create: (body: Body<'createSellOrder'>, options: Omit<RequestInput<'createSellOrder'>, 'body'> = {}) => this.request('createSellOrder', { ...options, body }),
    get: (id: string) => this.request('getSellOrder', { path: { id } }),
    list: (query: RequestInput<'listSellOrders'>['query'] = {}) => this.list('listSellOrders', { query }),
    cancel: (id: string) => this.request('cancelSellOrder', { path: { id } }),
  };

  readonly buyOrders = {
    create: (body: Body<'createBuyOrder'>, options: Omit<RequestInput<'createBuyOrder'>, 'body'> = {}) => this.request('createBuyOrder', { ...options, body }),
    get: (id: string) => this.request('getBuyOrder', { path: { id } }),
    list: (query: RequestInput<'listBuyOrders'>['query'] = {}) => this.list('listBuyOrders', { query }),
    cancel: (id: string) => this.request('cancelBuyOrder', { path: { id } }),
  };

  readonly settlements = {
    get: (id: string) => this.request('getSettlement', { path: { id } }),
    list: (query: RequestInput<'listSettlements'>['query'] = {}) => this.list('listSettlements', { query }),
  };

  readonly events = {
    list: (query: RequestInput<'listEvents'>['query'] = {}) => this.list('listEvents', { query }),
  };

  private backoff(attempt: number): number {
    const exponential = this.options.retryBaseDelayMs * 2 ** attempt;
    return Math.min(this.options.retryMaxDelayMs, exponential / 2 + Math.random() * (exponential / 2));
  }

  private async parse(response: Response): Promise<unknown> {
    const text = await response.text();
    if (!text) return undefined;
    return (response.headers.get('content-type') ?? '').includes('application/json') ? JSON.parse(text) : text;
  }

  private async error(response: Response): Promise<MpayApiError> {
    const request_id = response.headers.get('x-request-id') ?? undefined;
    const body = await this.parse(response).catch(() => undefined);
    const error = (body as { error?: { code?: string; message?: string; details?: unknown[] } } | undefined)?.error;
    return new MpayApiError(response.status, error?.code ?? `HTTP_${response.status}`, error?.message ?? response.statusText, request_id, error?.details ?? [], body);
  }
}

/**
 * Verifies a webhook delivery (Standard Webhooks and X-Service-Signature; see ./webhooks.js) and returns the typed
 * event. Pass the RAW body. Throws WebhookVerificationError: answer 401 then.
 */
export function verifyWebhook(body: RawBody, headers: HeaderBag, secret: string, options?: VerifyOptions): WebhookEvent {
  return verifyRawWebhook(body, headers, secret, options) as WebhookEvent;
}

export { computeServiceSignature, DEFAULT_TOLERANCE_SECONDS, verifyServiceSignature, verifyStandardSignature, WebhookVerificationError } from './webhooks.js';
export type { HeaderBag, RawBody, VerificationFailure, VerifyOptions } from './webhooks.js';
