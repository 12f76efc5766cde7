import { OPERATIONS, type OperationId } from './generated/operations.ts';
import { MpayApiError, MpayConnectionError } from './errors.ts';
import { PageRequest } from './pagination.ts';
import type { FilePart, ListItem, ListOperationId, Page, RequestInput, Success } from './types.ts';

export interface ClientOptions {
  /** The gateway's address; default the MPAY_BASE_URL environment variable, else http://localhost:3000. */
  baseUrl?: string;
  /**
   * A secret API key: `svc_live_…`, `svc_test_…` or `svc_sandbox_…`. Key routes get it as X-API-Key; for the
   * merchant routes (sell and buy orders, disputes, balance) the client trades it for a short-lived merchant JWT
   * in the key's mode (`POST /v1/auth/token`) and trades again before that token ends.
   */
  apiKey?: string;
  /** A merchant JWT to use as it is for the merchant routes (instead of trading the API key for one). */
  accessToken?: string;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** Retries after the first attempt, on 429, 5xx and network errors; default 3. */
  maxRetries?: number;
  /** First backoff when there is no Retry-After; doubles each time; default 200 ms. */
  retryBaseDelayMs?: number;
  /** Longest wait between attempts; default 30 s. */
  retryMaxDelayMs?: number;
  /** Longest one attempt may take; default 60 s. */
  timeoutMs?: number;
  /** Trade for a new token when the current one has less than this left; default 60 s. */
  tokenRefreshMarginSeconds?: number;
  fetch?: typeof fetch;
  /** For tests: how to wait between retries. */
  sleep?: (ms: number) => Promise<void>;
  /** For tests: the clock that decides when a traded token is renewed (ms since the epoch). */
  now?: () => number;
}

const RETRYABLE = new Set([429, 500, 502, 503, 504]);
const DEFAULT_BASE_URL = 'http://localhost:3000';

/** Retry-After in seconds or as an HTTP date, in milliseconds from now. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

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
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    search.set(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

function filePart(part: string | FilePart): string | Blob {
  if (typeof part === 'string' || part instanceof Blob) return part;
  return new Blob([part as BlobPart]);
}

function formData(fields: NonNullable<RequestInput<OperationId>['form']>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    for (const part of Array.isArray(value) ? value : [value]) {
      const converted = filePart(part);
      if (typeof converted === 'string') form.append(name, converted);
      else form.append(name, converted, `${name}.bin`);
    }
  }
  return form;
}

function environmentBaseUrl(): string | undefined {
  const environment = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return environment?.['MPAY_BASE_URL'] || undefined;
}

/** The claims of a JWT, read without verifying it (the server verifies; the client only needs `merchant_id`). */
function jwtClaims(token: string): Record<string, unknown> {
  const payload = token.split('.')[1];
  if (!payload) return {};
  try {
    const base64 = payload.replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(base64), (char) => char.charCodeAt(0))));
  } catch {
    return {};
  }
}

interface HeldToken {
  access_token: string;
  merchant_id: string;
  /** When to trade again (local clock, ms). */
  refresh_at_ms: number;
}

/** Sends one operation: credentials by the operation's kind, idempotency keys, retries, errors, pages. */
export class Transport {
  readonly baseUrl: string;
  readonly #options: ClientOptions;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #now: () => number;
  #token: HeldToken | undefined;
  #trading: Promise<HeldToken> | undefined;

  constructor(options: ClientOptions) {
    this.#options = options;
    this.baseUrl = (options.baseUrl ?? environmentBaseUrl() ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#now = options.now ?? Date.now;
  }

  /** The merchant the credential belongs to (from the given JWT, or from trading the API key). */
  async merchantId(): Promise<string> {
    if (this.#options.accessToken) {
      const merchant_id = jwtClaims(this.#options.accessToken)['merchant_id'];
      if (typeof merchant_id === 'string') return merchant_id;
    }
    return (await this.#merchantToken(false)).merchant_id;
  }

  /** A merchant JWT for the merchant routes: the one given, or one traded for the API key (reused until near its end). */
  async #merchantToken(force: boolean): Promise<HeldToken> {
    const given = this.#options.accessToken;
    if (given)
      return {
        access_token: given,
        merchant_id: String(jwtClaims(given)['merchant_id'] ?? ''),
        refresh_at_ms: Infinity,
      };
    if (!this.#options.apiKey)
      throw new MpayApiError(
        401,
        'UNAUTHORIZED',
        'Give the client an apiKey (or an accessToken) for this route',
        undefined,
        [],
        undefined,
      );
    if (!force && this.#token && this.#now() < this.#token.refresh_at_ms) return this.#token;
    // Calls that need a token at the same moment share one trade.
    this.#trading ??= this.request('createAccessToken', {})
      .then(({ data }) => {
        const margin_ms = Math.min(
          (this.#options.tokenRefreshMarginSeconds ?? 60) * 1000,
          (data.expires_in * 1000) / 2,
        );
        this.#token = {
          access_token: data.access_token,
          merchant_id: data.merchant_id,
          refresh_at_ms: this.#now() + data.expires_in * 1000 - margin_ms,
        };
        return this.#token;
      })
      .finally(() => {
        this.#trading = undefined;
      });
    return this.#trading;
  }

  async #credentialHeaders(operation: OperationId, force_new_token: boolean): Promise<Record<string, string>> {
    const { apiKey, accessToken } = this.#options;
    switch (OPERATIONS[operation].auth) {
      case 'key':
        if (apiKey) return { 'x-api-key': apiKey };
        return accessToken ? { authorization: `Bearer ${accessToken}` } : {};
      case 'merchant':
        return { authorization: `Bearer ${(await this.#merchantToken(force_new_token)).access_token}` };
      default:
        return {};
    }
  }

  /** Calls one operation; resolves with its success body, throws MpayApiError (or MpayConnectionError). */
  async request<K extends OperationId>(operation: K, input: RequestInput<K> = {}): Promise<Success<K>> {
    const spec = OPERATIONS[operation];
    const path = expandPath(spec.path, input.path as Record<string, unknown> | undefined);
    const url = `${this.baseUrl}${path}${queryString(input.query as Record<string, unknown> | undefined)}`;
    const headers: Record<string, string> = { accept: 'application/json', ...this.#options.headers, ...input.headers };
    if (input.body !== undefined) headers['content-type'] = 'application/json';
    // One key per call, reused by every retry: a retry after a lost response replays instead of acting twice.
    const idempotency_key =
      spec.idempotency === 'none' ? undefined : (input.idempotencyKey ?? globalThis.crypto.randomUUID());
    if (idempotency_key) headers['idempotency-key'] = idempotency_key;
    // A POST without a key is not safe to repeat after the server may have acted (5xx); 429 always is.
    const method: string = spec.method;
    const safe_to_repeat = method === 'GET' || method === 'PUT' || method === 'DELETE' || idempotency_key !== undefined;
    const traded_token = spec.auth === 'merchant' && !this.#options.accessToken;
    let renewed_token = false;
    let force_new_token = false;

    for (let attempt = 0; ; attempt += 1) {
      const credential = await this.#credentialHeaders(operation, force_new_token);
      force_new_token = false;
      let response: Response;
      try {
        response = await this.#send(
          url,
          {
            method: spec.method,
            headers: { ...headers, ...credential },
            ...(input.body === undefined ? {} : { body: JSON.stringify(input.body) }),
            ...(input.form === undefined ? {} : { body: formData(input.form) }),
          },
          input.signal,
        );
      } catch (error) {
        if (input.signal?.aborted || !safe_to_repeat || attempt >= this.#maxRetries()) {
          throw new MpayConnectionError(`${spec.method} ${url}: ${(error as Error).message}`, { cause: error });
        }
        await this.#sleep(this.#backoff(attempt));
        continue;
      }
      if (response.ok) return (await this.#parse(response)) as Success<K>;
      // A traded token the server no longer takes (revoked, or its key rolled): trade once more and repeat.
      if (response.status === 401 && traded_token && !renewed_token) {
        await response.body?.cancel();
        renewed_token = true;
        force_new_token = true;
        continue;
      }
      const retryable = response.status === 429 || (RETRYABLE.has(response.status) && safe_to_repeat);
      if (retryable && attempt < this.#maxRetries()) {
        await response.body?.cancel();
        const wait_ms = retryAfterMs(response.headers.get('retry-after')) ?? this.#backoff(attempt);
        await this.#sleep(Math.min(wait_ms, this.#options.retryMaxDelayMs ?? 30_000));
        continue;
      }
      throw await this.#error(response);
    }
  }

  /** A list operation as a PageRequest: await it for the first page, `for await` it for every item. */
  page<K extends ListOperationId>(operation: K, input: RequestInput<K> = {}): PageRequest<ListItem<K>> {
    return new PageRequest<ListItem<K>>(async (cursor) => {
      const query = { ...(input.query as Record<string, unknown> | undefined), ...(cursor ? { cursor } : {}) };
      return (await this.request(operation, { ...input, query } as RequestInput<K>)) as unknown as Page<ListItem<K>>;
    });
  }

  async #send(url: string, init: RequestInit, signal: AbortSignal | undefined): Promise<Response> {
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new Error(`timed out after ${this.#options.timeoutMs ?? 60_000} ms`)),
      this.#options.timeoutMs ?? 60_000,
    );
    const abort = () => timeout.abort(signal?.reason);
    signal?.addEventListener('abort', abort, { once: true });
    try {
      return await this.#fetch(url, { ...init, signal: timeout.signal });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
    }
  }

  #maxRetries(): number {
    return this.#options.maxRetries ?? 3;
  }

  #backoff(attempt: number): number {
    const base = this.#options.retryBaseDelayMs ?? 200;
    const exponential = base * 2 ** attempt;
    return Math.min(this.#options.retryMaxDelayMs ?? 30_000, exponential / 2 + Math.random() * (exponential / 2));
  }

  async #parse(response: Response): Promise<unknown> {
    const type = response.headers.get('content-type') ?? '';
    if (type.startsWith('image/') || type.startsWith('application/octet-stream'))
      return new Uint8Array(await response.arrayBuffer());
    const text = await response.text();
    if (!text) return undefined;
    return type.includes('application/json') ? JSON.parse(text) : text;
  }

  async #error(response: Response): Promise<MpayApiError> {
    const request_id = response.headers.get('x-request-id') ?? undefined;
    const body = await this.#parse(response).catch(() => undefined);
    const error = (body as { error?: { code?: string; message?: string; details?: unknown[] } } | undefined)?.error;
    const code = error?.code ?? `HTTP_${response.status}`;
    return new MpayApiError(
      response.status,
      code,
      error?.message ?? response.statusText,
      request_id,
      error?.details ?? [],
      body,
    );
  }
}
