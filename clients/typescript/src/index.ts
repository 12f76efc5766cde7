/**
 * @mpay/client: the typed client of the mpay merchant payments API.
 *
 *   const mpay = new Mpay({ apiKey: process.env.MPAY_API_KEY, baseUrl: 'http://localhost:3000' });
 *   const { data: payment } = await mpay.payments.create({ order_id: 'order-1', amount: '250.00', currency: 'THB', return_url });
 *   const { data: balance } = await mpay.balance.retrieve();
 *
 * Types come from the OpenAPI document (`./run sdk:generate`). One secret key reaches every merchant route: key routes
 * get it as X-API-Key, and for the merchant routes (sell and buy orders, disputes, balance) the client trades it for a
 * short-lived merchant JWT in the key's mode. POSTs that take an Idempotency-Key get one per call, kept across
 * retries (429 and 5xx, honouring Retry-After); errors are MpayApiError with `status`, `code` and `request_id`.
 */
import type { OperationId } from './generated/operations.ts';
import { Transport, type ClientOptions } from './transport.ts';
import {
  Auth,
  Balance,
  BuyOrders,
  Disputes,
  Events,
  Fx,
  Merchants,
  PaymentLinks,
  Payments,
  PendingFunds,
  Rates,
  Reference,
  Refunds,
  Sandbox,
  SellOrders,
  Settlements,
  Trades,
  WebhookDeliveries,
  WebhookEndpoints,
} from './resources.ts';
import type { ListItem, ListOperationId, RequestInput, Schemas, Success, WebhookEvent } from './types.ts';
import type { PageRequest } from './pagination.ts';
import { verifyWebhook as verifyRawWebhook, type HeaderBag, type RawBody, type VerifyOptions } from './webhooks.js';

export class Mpay {
  readonly payments: Payments;
  readonly trades: Trades;
  readonly paymentLinks: PaymentLinks;
  readonly refunds: Refunds;
  readonly sellOrders: SellOrders;
  readonly buyOrders: BuyOrders;
  readonly disputes: Disputes;
  readonly balance: Balance;
  readonly webhookEndpoints: WebhookEndpoints;
  readonly events: Events;
  readonly webhookDeliveries: WebhookDeliveries;
  readonly settlements: Settlements;
  readonly pendingFunds: PendingFunds;
  readonly rates: Rates;
  readonly fx: Fx;
  readonly sandbox: Sandbox;
  readonly reference: Reference;
  readonly merchants: Merchants;
  readonly auth: Auth;
  readonly #transport: Transport;

  /** `new Mpay({ apiKey, baseUrl })`, or `new Mpay(apiKey, { baseUrl })`. */
  constructor(options: ClientOptions);
  constructor(apiKey: string, options?: Omit<ClientOptions, 'apiKey'>);
  constructor(first: ClientOptions | string, rest: Omit<ClientOptions, 'apiKey'> = {}) {
    const options = typeof first === 'string' ? { ...rest, apiKey: first } : first;
    const transport = new Transport(options);
    this.#transport = transport;
    this.payments = new Payments(transport);
    this.trades = new Trades(transport);
    this.paymentLinks = new PaymentLinks(transport);
    this.refunds = new Refunds(transport);
    this.sellOrders = new SellOrders(transport);
    this.buyOrders = new BuyOrders(transport);
    this.disputes = new Disputes(transport);
    this.balance = new Balance(transport);
    this.webhookEndpoints = new WebhookEndpoints(transport);
    this.events = new Events(transport);
    this.webhookDeliveries = new WebhookDeliveries(transport);
    this.settlements = new Settlements(transport);
    this.pendingFunds = new PendingFunds(transport);
    this.rates = new Rates(transport);
    this.fx = new Fx(transport);
    this.sandbox = new Sandbox(transport);
    this.reference = new Reference(transport);
    this.merchants = new Merchants(transport);
    this.auth = new Auth(transport);
  }

  /** The gateway address the client calls. */
  get baseUrl(): string {
    return this.#transport.baseUrl;
  }

  /** Any operation by its operationId (the names in the OpenAPI document). */
  request<K extends OperationId>(operation: K, input: RequestInput<K> = {}): Promise<Success<K>> {
    return this.#transport.request(operation, input);
  }

  /** Any list operation by its operationId: await it for the first page, `for await` it for every item. */
  list<K extends ListOperationId>(operation: K, input: RequestInput<K> = {}): PageRequest<ListItem<K>> {
    return this.#transport.page(operation, input);
  }
}

/** The same class under the name earlier examples use. */
export { Mpay as MpayClient };
export default Mpay;

/**
 * Verifies a webhook delivery (Standard Webhooks and X-Service-Signature; see ./webhooks.js) and returns the typed
 * event. Pass the RAW body. Throws WebhookVerificationError: answer 401 then.
 */
export function verifyWebhook(
  body: RawBody,
  headers: HeaderBag,
  secret: string,
  options?: VerifyOptions,
): WebhookEvent {
  return verifyRawWebhook(body, headers, secret, options) as WebhookEvent;
}

export { MpayApiError, MpayConnectionError } from './errors.ts';
export { PageRequest } from './pagination.ts';
export { retryAfterMs, type ClientOptions } from './transport.ts';
export { OPERATIONS, type OperationId } from './generated/operations.ts';
export type { components, operations, paths } from './generated/schema.ts';
export type {
  Body,
  FilePart,
  ListItem,
  ListOperationId,
  Page,
  PathParams,
  Query,
  RequestInput,
  RequestOptions,
  Schemas,
  Success,
  WebhookEvent,
  WebhookEventType,
} from './types.ts';
export type * from './resources.ts';
export {
  computeServiceSignature,
  DEFAULT_TOLERANCE_SECONDS,
  verifyServiceSignature,
  verifyStandardSignature,
  WebhookVerificationError,
} from './webhooks.js';
export type { HeaderBag, RawBody, VerificationFailure, VerifyOptions } from './webhooks.js';

export type Payment = Schemas['Payment'];
export type SellOrder = Schemas['SellOrder'];
export type BuyOrder = Schemas['BuyOrder'];
export type Dispute = Schemas['Dispute'];
export type Settlement = Schemas['Settlement'];
export type PendingFundsRow = Schemas['PendingFunds'];
