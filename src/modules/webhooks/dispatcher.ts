import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db, Trx } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { signedHeaders } from './signing.ts';

/**
 * DESIGN.md's schedule, about 3 days: the first attempt at once, then these waits after each failure; a failure
 * after the last wait marks the delivery failed (10 attempts in all).
 */
export const RETRY_DELAYS_MS: readonly number[] = [5_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000, 86_400_000];
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
const RESPONSE_EXCERPT_CHARS = 512;

export interface DispatcherDeps {
  db: Db;
  clock: Clock;
  timeout_ms: number;
  logger?: Logger;
  /** How many deliveries one pass claims (each resource contributes at most its oldest pending event). */
  batch?: number;
}

/**
 * A claim is a lease, not a held transaction (PGlite has one connection, and no transaction should span an HTTP
 * call). It outlives the request timeout, so a live worker always records before the lease ends; if the worker
 * dies, the lease runs out and another pass sends the same event again (at least once, same event id).
 */
export function claimLeaseMs(timeout_ms: number): number {
  return timeout_ms * 2 + 1_000;
}

interface Claim {
  delivery_id: string;
  event_id: string;
  payload: unknown;
  url: string | null;
  secret: string | null;
}

/**
 * One dispatcher pass: claims due deliveries with FOR UPDATE SKIP LOCKED (so several workers share the queue without
 * sending an event twice), sends them concurrently, and records every attempt. Only the oldest pending event of an
 * ordering key (the resource) is ever claimable, so one resource's events go out in order; a retrying event holds back the later
 * events of its resource until it succeeds or gives up. Resolves to the number of deliveries it handled.
 */
/**
 * Puts the deliveries of `resource_id`'s events (written in the caller's transaction) in line behind `ordering_key`'s
 * events: e.g. the sandbox's `settlement.completed` goes out after the payment events it follows.
 */
export async function orderDeliveriesAfter(trx: Trx, resource_id: string, ordering_key: string): Promise<void> {
  await trx.updateTable('webhook_deliveries').set({ ordering_key }).where('resource_id', '=', resource_id).where('status', '=', 'pending').execute();
}

export async function dispatchDueWebhooks(deps: DispatcherDeps): Promise<number> {
  const claims = await claimDue(deps);
  await Promise.all(claims.map((claim) => deliver(deps, claim.token, claim)));
  return claims.length;
}

async function claimDue(deps: DispatcherDeps): Promise<(Claim & { token: string })[]> {
  const now = deps.clock.now();
  const token = randomUUID();
  return deps.db.transaction().execute(async (trx) => {
    const due = await trx
      .selectFrom('webhook_deliveries as d')
      .select('d.id')
      .where('d.status', '=', 'pending')
      .where('d.next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('d.claimed_until', 'is', null), eb('d.claimed_until', '<', now)]))
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('webhook_deliveries as earlier')
              .select('earlier.id')
              .where('earlier.status', '=', 'pending')
              .whereRef('earlier.merchant_id', '=', 'd.merchant_id')
              .whereRef('earlier.ordering_key', '=', 'd.ordering_key')
              .whereRef('earlier.event_seq', '<', 'd.event_seq'),
          ),
        ),
      )
      .orderBy('d.event_seq')
      .limit(deps.batch ?? 50)
      .forUpdate()
      .skipLocked()
      .execute();
    if (due.length === 0) return [];
    const ids = due.map((row) => row.id);
    await trx
      .updateTable('webhook_deliveries')
      .set({ claim_token: token, claimed_until: new Date(now.getTime() + claimLeaseMs(deps.timeout_ms)) })
      .where('id', 'in', ids)
      .execute();
    const rows = await trx
      .selectFrom('webhook_deliveries as d')
      .innerJoin('events as e', 'e.id', 'd.event_id')
      .innerJoin('merchants as m', 'm.id', 'd.merchant_id')
      .select(['d.id as delivery_id', 'd.event_id', 'd.event_seq', 'e.payload', 'm.webhook_url as url', 'm.webhook_secret as secret'])
      .where('d.id', 'in', ids)
      .orderBy('d.event_seq')
      .execute();
    return rows.map((row) => ({ delivery_id: row.delivery_id, event_id: row.event_id, payload: row.payload, url: row.url, secret: row.secret, token }));
  });
}

interface AttemptOutcome {
  url: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_excerpt: string | null;
  succeeded: boolean;
  started_at: Date;
}

/** POSTs the exact bytes it signed; 2xx is success, anything else (a redirect too) or the timeout is a failure. */
export async function sendSigned(url: string, secret: string, event_id: string, body: string, at: Date, timeout_ms: number): Promise<AttemptOutcome> {
  const started = performance.now();
  const headers = signedHeaders(secret, event_id, Math.floor(at.getTime() / 1000), body);
  try {
    const response = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(timeout_ms) });
    const text = await response.text().catch(() => '');
    return {
      url,
      status_code: response.status,
      error: null,
      duration_ms: Math.round(performance.now() - started),
      response_excerpt: text.slice(0, RESPONSE_EXCERPT_CHARS),
      succeeded: response.status >= 200 && response.status < 300,
      started_at: at,
    };
  } catch (error) {
    const cause = error as Error & { cause?: { code?: string; message?: string } };
    const message = cause.name === 'TimeoutError' ? `timeout after ${timeout_ms} ms` : (cause.cause?.code ?? cause.cause?.message ?? cause.message);
    return { url, status_code: null, error: message, duration_ms: Math.round(performance.now() - started), response_excerpt: null, succeeded: false, started_at: at };
  }
}

async function deliver(deps: DispatcherDeps, token: string, claim: Claim): Promise<void> {
  const at = deps.clock.now();
  if (!claim.url || !claim.secret) {
    // No endpoint configured: nothing to send. `recover` re-queues these once the merchant sets one.
    await deps.db
      .updateTable('webhook_deliveries')
      .set({ status: 'skipped', claim_token: null, claimed_until: null, last_error: 'no webhook endpoint configured' })
      .where('id', '=', claim.delivery_id)
      .where('claim_token', '=', token)
      .execute();
    return;
  }
  const body = JSON.stringify(claim.payload);
  const outcome = await sendSigned(claim.url, claim.secret, claim.event_id, body, at, deps.timeout_ms);
  if (!outcome.succeeded) deps.logger?.warn({ delivery_id: claim.delivery_id, event_id: claim.event_id, status_code: outcome.status_code, error: outcome.error }, 'webhook attempt failed');
  await recordAttempt(deps, token, claim.delivery_id, outcome);
}

/** Records the attempt and applies its outcome, unless the lease was lost meanwhile (then only the attempt is kept). */
async function recordAttempt(deps: DispatcherDeps, token: string, delivery_id: string, outcome: AttemptOutcome): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const delivery = await trx
      .updateTable('webhook_deliveries')
      .set((eb) => ({ attempt_count: eb('attempt_count', '+', 1), last_attempt_at: outcome.started_at, last_status_code: outcome.status_code, last_error: outcome.error }))
      .where('id', '=', delivery_id)
      .returning(['attempt_count', 'retry_count', 'claim_token'])
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('webhook_attempts')
      .values({ id: randomUUID(), delivery_id, attempt_number: delivery.attempt_count, ...outcome })
      .execute();
    if (delivery.claim_token !== token) return;
    if (outcome.succeeded) {
      await trx
        .updateTable('webhook_deliveries')
        .set({ status: 'succeeded', delivered_at: now, retry_count: 0, claim_token: null, claimed_until: null })
        .where('id', '=', delivery_id)
        .execute();
      return;
    }
    const failures = delivery.retry_count + 1;
    const delay_ms = RETRY_DELAYS_MS[failures - 1];
    await trx
      .updateTable('webhook_deliveries')
      .set(
        delay_ms === undefined
          ? { status: 'failed', retry_count: failures, claim_token: null, claimed_until: null }
          : { retry_count: failures, next_attempt_at: new Date(now.getTime() + delay_ms), claim_token: null, claimed_until: null },
      )
      .where('id', '=', delivery_id)
      .execute();
  });
}
