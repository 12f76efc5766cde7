import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db, Trx } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { signingSecrets } from './endpoints.ts';
import type { SecretBox } from './secret-box.ts';
import { signedHeaders } from './signing.ts';
import type { AttemptRow, EndpointRow } from './tables.ts';
import {
  checkTargetAtConnect,
  guardedLookup,
  isPrivateAddress,
  TargetForbiddenError,
  type TargetPolicy,
} from './targets.ts';

/**
 * The retry schedule (docs/webhooks.md), about 3 days: the first attempt at once, then these waits after each failure; a failure
 * after the last wait marks the delivery failed (10 attempts in all).
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  5_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000, 86_400_000,
];
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
const RESPONSE_EXCERPT_CHARS = 512;
const DEFAULT_BATCH = 50;
const DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT = 4;
/** In flight at once to an endpoint whose last attempt failed (`failing_since`), across every worker. */
export const FAILING_MAX_IN_FLIGHT_PER_ENDPOINT = 1;
/** The share of a worker's slots that deliveries to failing endpoints may take; the rest wait for endpoints that answer. */
export const FAILING_SHARE_OF_SLOTS = 0.25;
/** The worker's dispatcher polls at least this often beside its NOTIFY wake-ups (which are sent after commit and can be lost). */
export const WEBHOOK_FALLBACK_POLL_MS = 250;

export interface DispatcherDeps {
  db: Db;
  clock: Clock;
  timeout_ms: number;
  /** Opens the endpoints' sealed secrets. */
  box: SecretBox;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS (the SSRF guard's operator switch); false when absent. */
  allow_private_targets?: boolean;
  /** PUBLIC_BASE_URL: never a target. */
  self_origin?: string;
  logger?: Logger;
  /** How many deliveries one pass claims (each resource contributes at most its oldest pending event per endpoint). */
  batch?: number;
  /** At most this many deliveries to one endpoint are leased at once, across every worker (a slow endpoint holds only these). */
  max_in_flight_per_endpoint?: number;
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
  is_sandbox: boolean;
  /** The line it waits in at its endpoint (the resource, or the one it is ordered after). */
  ordering_key: string;
  endpoint: Pick<EndpointRow, 'id' | 'url' | 'secret_sealed' | 'previous_secret_sealed' | 'previous_secret_expires_at'>;
  /** Its endpoint's last attempt failed when it was claimed. */
  failing: boolean;
  token: string;
}

/**
 * Puts the deliveries of `resource_id`'s events (written in the caller's transaction) in line behind `ordering_key`'s
 * events: e.g. the sandbox's `settlement.completed` goes out after the payment events it follows.
 */
export async function orderDeliveriesAfter(trx: Trx, resource_id: string, ordering_key: string): Promise<void> {
  await trx
    .updateTable('webhook_deliveries')
    .set({ ordering_key })
    .where('resource_id', '=', resource_id)
    .where('status', '=', 'pending')
    .execute();
}

/**
 * One pass that waits: claims a batch (see claimDue), sends it concurrently and resolves, with the number of
 * deliveries handled, once every attempt is recorded or has failed to be (see unrecorded). Tests and one-shot callers
 * use it; the worker uses WebhookDispatcher, which does not wait.
 */
export async function dispatchDueWebhooks(deps: DispatcherDeps): Promise<number> {
  const batch = deps.batch ?? DEFAULT_BATCH;
  const claims = await claimDue(deps, batch, batch);
  await Promise.all(claims.map((claim) => deliver(deps, claim, false).then(() => undefined, unrecorded(deps, claim))));
  return claims.length;
}

/**
 * A delivery whose attempt could not be recorded is logged and holds back no other; its lease runs out, and a later
 * pass sends it again (at least once, same event id).
 */
function unrecorded(deps: DispatcherDeps, claim: Claim): (error: unknown) => void {
  return (error) =>
    deps.logger?.error({ err: error, delivery_id: claim.delivery_id }, 'webhook attempt could not be recorded');
}

/**
 * The worker's dispatcher: a pass claims only as many deliveries as it has free slots and does not wait
 * for the sends, so an endpoint that answers in 5 s (or never) holds its own slots and leases, not the pass; other
 * merchants' deliveries are claimed and sent by the next pass at once. A send that succeeds hands its slot to the next
 * event of its line as it records the success (see deliver), without waiting for a pass. Ordering and the lease
 * rules live in the SQL (`mpay_claim_webhook_deliveries`, `mpay_record_webhook_attempt`), so N worker processes share the queue without sending an
 * event twice. Endpoints whose last attempt failed get one slot each and together at most FAILING_SHARE_OF_SLOTS of
 * this worker's (a bulkhead): many dead endpoints of busy merchants cannot fill the worker and hold every other
 * merchant's deliveries until their timeouts.
 *
 * Not a GroupCommit: the queue is the table, shared by every worker process, so the claim statement cuts the batch,
 * and the slots are a cap on sends, not a queue: a pass claims only what it can send at once, so no leased delivery
 * waits in memory while its lease runs out. The failure rule is GroupCommit's, applied to every delivery from the
 * start: each is sent and recorded alone, so one whose attempt cannot be recorded holds back no other (see
 * unrecorded); a claim that fails leases nothing, and the next pass claims again.
 */
export class WebhookDispatcher {
  readonly #deps: DispatcherDeps;
  readonly #max_in_flight: number;
  readonly #max_failing: number;
  readonly #in_flight = new Set<Promise<void>>();
  #failing_in_flight = 0;
  readonly #onSettled: () => void;

  constructor(deps: DispatcherDeps & { max_in_flight: number; onSettled?: () => void }) {
    this.#deps = deps;
    this.#max_in_flight = deps.max_in_flight;
    this.#max_failing = Math.max(1, Math.floor(deps.max_in_flight * FAILING_SHARE_OF_SLOTS));
    this.#onSettled = deps.onSettled ?? (() => {});
  }

  get in_flight(): number {
    return this.#in_flight.size;
  }

  /** Sends to endpoints whose last attempt failed, now. */
  get failing_in_flight(): number {
    return this.#failing_in_flight;
  }

  /** One pass: claims up to the free slots and starts the sends; resolves to how many it started. */
  async pass(): Promise<number> {
    const free = this.#max_in_flight - this.#in_flight.size;
    if (free <= 0) return 0;
    const batch = Math.min(this.#deps.batch ?? DEFAULT_BATCH, free);
    const claims = await claimDue(
      this.#deps,
      batch,
      Math.min(batch, Math.max(0, this.#max_failing - this.#failing_in_flight)),
    );
    for (const claim of claims) {
      if (claim.failing) this.#failing_in_flight++;
      const sending: Promise<void> = deliverInLine(this.#deps, claim).finally(() => {
        if (claim.failing) this.#failing_in_flight--;
        this.#in_flight.delete(sending);
        // A finished send frees a slot and may unblock the next event of its resource.
        this.#onSettled();
      });
      this.#in_flight.add(sending);
    }
    return claims.length;
  }

  /** Resolves when every send started so far is recorded. */
  async drain(): Promise<void> {
    while (this.#in_flight.size > 0) await Promise.all([...this.#in_flight]);
  }
}

interface ClaimedRow {
  delivery_id: string;
  event_id: string;
  is_sandbox: boolean;
  ordering_key: string;
  payload: unknown;
  endpoint_id: string;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  /** Set by the claim; the record's chained next event is always of an endpoint that just answered. */
  failing?: boolean;
}

/**
 * Claims due deliveries under a lease, in one statement (the function `mpay_claim_webhook_deliveries`, migrations
 * 0160 and 0164): only the oldest pending event of a line (ordering key) per endpoint, and at most an endpoint's free
 * slots (`max_in_flight_per_endpoint` less its live leases; FAILING_MAX_IN_FLIGHT_PER_ENDPOINT for an endpoint whose
 * last attempt failed), so an endpoint at its cap never crowds others out of the batch however long its backlog, and at
 * most `failing_batch` deliveries of failing endpoints; rows locked `FOR UPDATE SKIP LOCKED` so N workers share the
 * queue without sending an event twice. The caps are counted from the statement's snapshot: two workers claiming at
 * the same instant may pass them by a few together.
 */
async function claimDue(deps: DispatcherDeps, batch: number, failing_batch: number): Promise<Claim[]> {
  const now = deps.clock.now();
  const token = randomUUID();
  const per_endpoint = deps.max_in_flight_per_endpoint ?? DEFAULT_MAX_IN_FLIGHT_PER_ENDPOINT;
  const failing_per_endpoint = Math.min(per_endpoint, FAILING_MAX_IN_FLIGHT_PER_ENDPOINT);
  const until = new Date(now.getTime() + claimLeaseMs(deps.timeout_ms));
  const { rows } = await sql<ClaimedRow>`
    select * from mpay_claim_webhook_deliveries(${now}, ${until}, ${token}, ${per_endpoint}, ${batch}, ${failing_per_endpoint}, ${failing_batch})`.execute(
    deps.db,
  );
  return rows.map((row) => claimOf(row, token));
}

function claimOf(row: ClaimedRow, token: string): Claim {
  const { endpoint_id, failing, url, secret_sealed, previous_secret_sealed, previous_secret_expires_at, ...line } = row;
  const endpoint = { id: endpoint_id, url, secret_sealed, previous_secret_sealed, previous_secret_expires_at };
  return { ...line, endpoint, failing: failing ?? false, token };
}

/** What one delivery attempt found: the `webhook_attempts` row less its identity. */
type AttemptOutcome = Omit<AttemptRow, 'id' | 'delivery_id' | 'attempt_number'>;

function forbidden(error: unknown): string | null {
  return error instanceof TargetForbiddenError ? `WEBHOOK_URL_FORBIDDEN: ${error.reason}` : null;
}

/**
 * POSTs the exact bytes it signed; 2xx is success, anything else (a redirect too: never followed) or the timeout is
 * a failure. The SSRF guard checks the URL, then every address DNS returns for this very connection.
 */
export async function sendSigned(
  url: string,
  secrets: readonly string[],
  event_id: string,
  body: string,
  at: Date,
  timeout_ms: number,
  policy: TargetPolicy,
): Promise<AttemptOutcome> {
  const started = performance.now();
  const failed = (error: string): AttemptOutcome => ({
    url,
    status_code: null,
    error,
    duration_ms: Math.round(performance.now() - started),
    response_excerpt: null,
    succeeded: false,
    started_at: at,
  });
  const headers = signedHeaders(secrets, event_id, Math.floor(at.getTime() / 1000), body);
  let target: URL;
  try {
    target = new URL(url);
    checkTargetAtConnect(target, policy);
  } catch (error) {
    return failed(forbidden(error) ?? `invalid URL: ${(error as Error).message}`);
  }
  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: guardedLookup(policy, target.port ? Number(target.port) : target.protocol === 'https:' ? 443 : 80),
      },
      (response) => {
        // What a private or loopback target answers stays on the network it came from.
        const keep_excerpt = !isPrivateAddress(response.socket.remoteAddress ?? '0.0.0.0');
        let excerpt = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          if (excerpt.length < RESPONSE_EXCERPT_CHARS) excerpt += chunk;
        });
        const done = () => {
          const status_code = response.statusCode ?? 0;
          const duration_ms = Math.round(performance.now() - started);
          finish({
            url,
            status_code,
            error: null,
            duration_ms,
            response_excerpt: keep_excerpt ? excerpt.slice(0, RESPONSE_EXCERPT_CHARS) : null,
            succeeded: status_code >= 200 && status_code < 300,
            started_at: at,
          });
        };
        response.on('end', done);
        response.on('error', done);
      },
    );
    const timer = setTimeout(() => {
      finish(failed(`timeout after ${timeout_ms} ms`));
      request.destroy();
    }, timeout_ms);
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish(failed(forbidden(error) ?? error.code ?? error.message)),
    );
    request.end(body);
  });
}

/**
 * Sends one claimed delivery and records the attempt. With `chain` (the worker's dispatcher), a success also leases
 * the next event of its line at that endpoint, if it is due and unleased, and answers it: the caller sends it at once
 * in the same slot, without a wake-up and a claim pass (a payment's second event follows its first by one round trip).
 */
async function deliver(deps: DispatcherDeps, claim: Claim, chain: boolean): Promise<Claim | null> {
  const at = deps.clock.now();
  let secrets: string[];
  try {
    secrets = signingSecrets(deps.box, claim.endpoint, at);
  } catch {
    // Sealed under another key (WEBHOOK_SECRETS_KEY changed): nothing can be signed; counted as a failed attempt.
    deps.logger?.error(
      { delivery_id: claim.delivery_id, endpoint_id: claim.endpoint.id },
      'webhook secret cannot be opened',
    );
    const error = 'webhook secret cannot be opened with this WEBHOOK_SECRETS_KEY';
    return recordAttempt(
      deps,
      claim,
      {
        url: claim.endpoint.url,
        status_code: null,
        error,
        duration_ms: 0,
        response_excerpt: null,
        succeeded: false,
        started_at: at,
      },
      false,
    );
  }
  const body = JSON.stringify(claim.payload);
  const policy = {
    is_sandbox: claim.is_sandbox,
    allow_private: deps.allow_private_targets ?? false,
    ...(deps.self_origin ? { self_origin: deps.self_origin } : {}),
  };
  const outcome = await sendSigned(claim.endpoint.url, secrets, claim.event_id, body, at, deps.timeout_ms, policy);
  if (!outcome.succeeded)
    deps.logger?.warn(
      {
        delivery_id: claim.delivery_id,
        event_id: claim.event_id,
        status_code: outcome.status_code,
        error: outcome.error,
      },
      'webhook attempt failed',
    );
  return recordAttempt(deps, claim, outcome, chain);
}

/**
 * deliver, then the next events of the same line while each succeeds (the worker's dispatcher); never rejects: an
 * attempt that could not be recorded ends the line's turn there (see unrecorded).
 */
async function deliverInLine(deps: DispatcherDeps, claim: Claim): Promise<void> {
  for (let next: Claim | null = claim; next !== null; ) {
    const current: Claim = next;
    next = await deliver(deps, current, true).catch((error: unknown) => {
      unrecorded(deps, current)(error);
      return null;
    });
  }
}

/** The retry schedule as the array literal `mpay_record_webhook_attempt` takes. */
const RETRY_DELAYS_LITERAL = `{${RETRY_DELAYS_MS.join(',')}}`;

/**
 * Records the attempt and applies its outcome, unless the lease was lost meanwhile (then only the attempt is kept), in
 * one call (`mpay_record_webhook_attempt`): a failure waits for the next step of RETRY_DELAYS_MS or,
 * past its end, marks the delivery failed. With `chain`, answers the next event of the line it leased (see deliver).
 */
async function recordAttempt(
  deps: DispatcherDeps,
  claim: Claim,
  outcome: AttemptOutcome,
  chain: boolean,
): Promise<Claim | null> {
  const now = deps.clock.now();
  const until = chain ? new Date(now.getTime() + claimLeaseMs(deps.timeout_ms)) : null;
  const { rows } = await sql<ClaimedRow>`
    select * from mpay_record_webhook_attempt(
      ${claim.delivery_id}, ${claim.token}, ${randomUUID()}, ${outcome.url}, ${outcome.status_code}, ${outcome.error}, ${outcome.duration_ms},
      ${outcome.response_excerpt}, ${outcome.succeeded}, ${outcome.started_at}, ${now}, ${RETRY_DELAYS_LITERAL}::integer[], ${until}::timestamptz)`.execute(
    deps.db,
  );
  const [next] = rows;
  return next ? claimOf(next, claim.token) : null;
}
