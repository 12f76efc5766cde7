/** Types derived from the generated OpenAPI types: what each operation takes and answers. */
import type { OPERATIONS, OperationId } from './generated/operations.ts';
import type { components, operations } from './generated/schema.ts';

export type Schemas = components['schemas'];

type Operation<K extends OperationId> = operations[K];
type Parameters<K extends OperationId> = Operation<K> extends { parameters: infer P } ? P : never;
type Part<K extends OperationId, Name extends string> =
  Parameters<K> extends { [key in Name]?: infer V }
    ? [V] extends [never] | [undefined]
      ? never
      : NonNullable<V>
    : never;
type Json<R> = R extends { content: { 'application/json': infer J } }
  ? J
  : R extends { content: { [type: `image/${string}`]: unknown } }
    ? Uint8Array
    : R extends { content: Record<string, unknown> }
      ? string
      : undefined;
type SuccessStatus = 200 | 201 | 202 | 204;

/** An operation's JSON request body. */
export type Body<K extends OperationId> =
  Operation<K> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** An operation's query parameters. */
export type Query<K extends OperationId> = Part<K, 'query'>;
/** An operation's path parameters. */
export type PathParams<K extends OperationId> = Part<K, 'path'>;

/** What an operation answers on success: the parsed JSON, the text of a CSV, or the bytes of an image. */
export type Success<K extends OperationId> = {
  [S in keyof Operation<K>['responses']]: S extends SuccessStatus ? Json<Operation<K>['responses'][S]> : never;
}[keyof Operation<K>['responses']];

/** A file part of a multipart request. */
export type FilePart = Blob | Uint8Array | ArrayBuffer;

/** Per-call options every method takes as its last argument. */
export interface RequestOptions {
  /** Overrides the automatic key (POSTs that take one get a fresh UUID per call, kept across its retries). */
  idempotencyKey?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** The request of one operation: path and query parameters, a JSON or multipart body, and call options. */
export interface RequestInput<K extends OperationId> extends RequestOptions {
  path?: PathParams<K>;
  query?: Query<K>;
  body?: Body<K>;
  /** A multipart/form-data body: each field a string or a file (several files under one name: an array). */
  form?: Record<string, string | FilePart | (string | FilePart)[]>;
}

/** `{data: [...], has_more, next_cursor}`: every list answer. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** A list operation's item type. */
export type ListItem<K extends OperationId> = Success<K> extends { data: (infer T)[] } ? T : never;
export type ListOperationId = {
  [K in OperationId]: (typeof OPERATIONS)[K]['list'] extends true ? K : never;
}[OperationId];

type WebhookOperations = { [K in keyof operations as K extends `webhook_${string}` ? K : never]: operations[K] };
/** Every webhook event, discriminated by `type` (`payment.completed`, `sell_order.cash_leg_requested`, ...). */
export type WebhookEvent = {
  [K in keyof WebhookOperations]: WebhookOperations[K] extends {
    requestBody: { content: { 'application/json': infer E } };
  }
    ? E
    : never;
}[keyof WebhookOperations];
export type WebhookEventType = WebhookEvent['type'];
