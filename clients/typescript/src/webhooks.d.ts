/** Verifies mpay webhooks in a merchant's Node.js server; see ./webhooks.js. */
export type RawBody = string | Uint8Array | ArrayBuffer;
export type HeaderBag = Record<string, string | string[] | undefined> | { get(name: string): string | null };

export type VerificationFailure =
  | 'raw_body_required'
  | 'secret_missing'
  | 'signature_missing'
  | 'signature_mismatch'
  | 'timestamp_invalid'
  | 'timestamp_out_of_tolerance'
  | 'body_invalid';

export declare const DEFAULT_TOLERANCE_SECONDS: number;

export declare class WebhookVerificationError extends Error {
  readonly reason: VerificationFailure;
  constructor(reason: VerificationFailure, message: string);
}

export interface VerifyOptions {
  /** Default 'both': every mpay delivery carries both signatures. */
  scheme?: 'service' | 'standard' | 'both';
  /** Standard Webhooks replay window; default 300 s. */
  toleranceSeconds?: number;
  /** The time to check the timestamp against; default now. */
  now?: Date;
}

export interface WebhookEvent {
  id: string;
  event: string;
  type: string;
  idempotency_key: string;
  timestamp: string;
  sandbox?: true;
  data: Record<string, unknown>;
  [flat: string]: unknown;
}

export declare function computeServiceSignature(body: RawBody, secret: string): string;
export declare function verifyServiceSignature(
  body: RawBody,
  signature: string | undefined | null,
  secret: string,
): void;
export declare function verifyStandardSignature(
  body: RawBody,
  headers: HeaderBag,
  secret: string,
  options?: VerifyOptions,
): void;
export declare function verifyWebhook(
  body: RawBody,
  headers: HeaderBag,
  secret: string,
  options?: VerifyOptions,
): WebhookEvent;
