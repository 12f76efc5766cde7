import { createHmac } from 'node:crypto';
import { hmacSha256Hex, randomBase62 } from '../../lib/crypto.ts';

/** A new endpoint secret: `whsec_` + base64 of 32 random base62 characters (Standard Webhooks' form). */
export function generateWebhookSecret(): string {
  return `whsec_${Buffer.from(randomBase62(32)).toString('base64')}`;
}

/**
 * The two signature schemes every delivery carries, both over the exact bytes sent:
 * - `X-Service-Signature`: the contract's, lowercase hex HMAC-SHA256 of the raw body keyed with the whole secret
 *   string (`whsec_…`, UTF-8); always the newest secret.
 * - Standard Webhooks: `webhook-id`, `webhook-timestamp` (unix seconds) and `webhook-signature: v1,<base64>` of
 *   HMAC-SHA256 over `id.timestamp.body`, keyed with the base64-decoded part after `whsec_`, so receivers can use
 *   off-the-shelf verifiers with replay protection. During a rotation's overlap it lists one signature per secret,
 *   newest first, space-separated (`v1,<new> v1,<old>`), as the Standard Webhooks spec allows.
 */
export function serviceSignature(secret: string, body: string): string {
  return hmacSha256Hex(secret, body);
}

export function standardWebhookKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

export function standardSignature(secret: string, id: string, timestamp_seconds: number, body: string): string {
  return `v1,${createHmac('sha256', standardWebhookKey(secret)).update(`${id}.${timestamp_seconds}.${body}`).digest('base64')}`;
}

/** `secrets`: the newest first, then a previous one still in its rotation overlap. */
export function signedHeaders(
  secrets: string | readonly string[],
  id: string,
  timestamp_seconds: number,
  body: string,
): Record<string, string> {
  const all = typeof secrets === 'string' ? [secrets] : secrets;
  const [newest] = all;
  if (!newest) throw new Error('signedHeaders needs at least one secret');
  return {
    'content-type': 'application/json',
    'user-agent': 'mpay-webhooks/1',
    'x-service-signature': serviceSignature(newest, body),
    'webhook-id': id,
    'webhook-timestamp': String(timestamp_seconds),
    'webhook-signature': all.map((secret) => standardSignature(secret, id, timestamp_seconds, body)).join(' '),
  };
}
