// Verifies mpay webhooks in a merchant's Node.js server. Plain JavaScript (no build step): import it as `import { verifyWebhook } from '@mpay/client/webhooks'` (or
// `mpay/webhooks`). Give it the RAW request body (the exact bytes received, before any
// JSON parsing), the request headers and your webhook secret (`whsec_…`).
import { createHmac, timingSafeEqual } from 'node:crypto';

export const DEFAULT_TOLERANCE_SECONDS = 300;

export class WebhookVerificationError extends Error {
  /** @param {string} reason @param {string} message */
  constructor(reason, message) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
  }
}

function rawBytes(body) {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  throw new WebhookVerificationError(
    'raw_body_required',
    'Pass the raw request body (a Buffer or string of the exact bytes received), not a parsed object: re-serialised JSON does not match the signature',
  );
}

function header(headers, name) {
  if (!headers) return undefined;
  if (typeof headers.get === 'function') return headers.get(name) ?? undefined;
  const direct = headers[name] ?? headers[name.toLowerCase()];
  const value = direct ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

/** Compares two ASCII strings in constant time; lengths first (that reveals only the length). */
function safeEqual(a, b) {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The contract's `X-Service-Signature`: lowercase hex HMAC-SHA256 of the raw body keyed with the whole secret. */
export function computeServiceSignature(body, secret) {
  return createHmac('sha256', secret).update(rawBytes(body)).digest('hex');
}

export function verifyServiceSignature(body, signature, secret) {
  if (!secret) throw new WebhookVerificationError('secret_missing', 'No webhook secret given');
  if (!signature) throw new WebhookVerificationError('signature_missing', 'The X-Service-Signature header is missing');
  if (!safeEqual(computeServiceSignature(body, secret), String(signature).trim().toLowerCase())) {
    throw new WebhookVerificationError(
      'signature_mismatch',
      'X-Service-Signature does not match the body: wrong secret, or the body was changed or re-serialised',
    );
  }
}

/** Standard Webhooks: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the base64 part after `whsec_`. */
export function verifyStandardSignature(body, headers, secret, options = {}) {
  if (!secret) throw new WebhookVerificationError('secret_missing', 'No webhook secret given');
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError(
      'signature_missing',
      'The webhook-id, webhook-timestamp or webhook-signature header is missing',
    );
  if (!/^\d+$/.test(String(timestamp)))
    throw new WebhookVerificationError('timestamp_invalid', 'webhook-timestamp is not unix seconds');
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now_seconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now_seconds - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `webhook-timestamp is more than ${tolerance} s away from now (a replay, or a wrong clock)`,
    );
  }
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), rawBytes(body)]);
  const expected = createHmac('sha256', key).update(signed).digest('base64');
  const matches = String(signatures)
    .split(' ')
    .map((part) => part.split(','))
    .some(([version, signature]) => version === 'v1' && signature !== undefined && safeEqual(signature, expected));
  if (!matches)
    throw new WebhookVerificationError(
      'signature_mismatch',
      'webhook-signature does not match: wrong secret, or the body was changed or re-serialised',
    );
}

/**
 * Verifies a delivery and returns the parsed event. `scheme`: 'service' (X-Service-Signature), 'standard' (Standard
 * Webhooks, with replay protection by timestamp) or 'both' (the default: every mpay delivery carries both).
 * Throws WebhookVerificationError (answer 401) on any failure.
 */
export function verifyWebhook(body, headers, secret, options = {}) {
  const scheme = options.scheme ?? 'both';
  if (scheme === 'service' || scheme === 'both')
    verifyServiceSignature(body, header(headers, 'x-service-signature'), secret);
  if (scheme === 'standard' || scheme === 'both') verifyStandardSignature(body, headers, secret, options);
  try {
    return JSON.parse(rawBytes(body).toString('utf8'));
  } catch {
    throw new WebhookVerificationError('body_invalid', 'The body is not JSON');
  }
}
