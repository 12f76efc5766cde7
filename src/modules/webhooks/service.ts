import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { afterCursor, decodeCursor, toPage } from '../../http/pagination.ts';
import { iso } from '../../http/schemas.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { EVENTS_CHANNEL } from '../events/outbox.ts';
import { generateWebhookSecret } from '../merchants/credentials.ts';
import type { AttemptRow, DeliveryRow, DeliveryStatus } from './tables.ts';

export interface WebhooksDeps {
  db: Db;
  clock: Clock;
}

/** `GET /v1/events` looks back this far. */
export const EVENTS_RETENTION_MS = 30 * 24 * 3600 * 1000;

export interface EndpointView {
  url: string | null;
  secret_set: boolean;
}

/**
 * Sets the merchant's webhook URL (one URL for live and sandbox, as the contract says) and returns it with the signing
 * secret: this response and rotation are the only places the secret is shown. A merchant without a secret gets one.
 */
export async function setEndpoint(deps: WebhooksDeps, scope: MerchantScope, url: string): Promise<{ url: string; secret: string }> {
  return deps.db.transaction().execute(async (trx) => {
    const merchant = await trx.selectFrom('merchants').select('webhook_secret').where('id', '=', scope.merchant_id).forUpdate().executeTakeFirstOrThrow();
    const secret = merchant.webhook_secret ?? generateWebhookSecret();
    await trx.updateTable('merchants').set({ webhook_url: url, webhook_secret: secret }).where('id', '=', scope.merchant_id).execute();
    return { url, secret };
  });
}

export async function getEndpoint(deps: WebhooksDeps, scope: MerchantScope): Promise<EndpointView> {
  const merchant = await deps.db.selectFrom('merchants').select(['webhook_url', 'webhook_secret']).where('id', '=', scope.merchant_id).executeTakeFirstOrThrow();
  return { url: merchant.webhook_url, secret_set: merchant.webhook_secret !== null };
}

/** Replaces the signing secret at once; deliveries from now on are signed with the new one. */
export async function rotateSecret(deps: WebhooksDeps, scope: MerchantScope): Promise<{ url: string | null; secret: string }> {
  const secret = generateWebhookSecret();
  const row = await deps.db.updateTable('merchants').set({ webhook_secret: secret }).where('id', '=', scope.merchant_id).returning('webhook_url').executeTakeFirstOrThrow();
  return { url: row.webhook_url, secret };
}

export interface EventView {
  id: string;
  type: string;
  resource_type: string;
  resource_id: string;
  created_at: string;
  delivery_status: DeliveryStatus | null;
  payload: Record<string, unknown>;
}

export interface ListEventsQuery {
  type?: string | undefined;
  resource_id?: string | undefined;
  delivered?: boolean | undefined;
  cursor?: string | undefined;
  limit: number;
}

export async function listEvents(deps: WebhooksDeps, scope: MerchantScope, query: ListEventsQuery) {
  // Keyset on (created_at, seq): events written in one transaction share a timestamp, and seq keeps their order.
  const position = decodeCursor(query.cursor, 'sequence');
  let select = deps.db
    .selectFrom('events as e')
    .leftJoin('webhook_deliveries as d', 'd.event_id', 'e.id')
    .select(['e.id', 'e.seq', 'e.type', 'e.resource_type', 'e.resource_id', 'e.created_at', 'e.payload', 'd.status as delivery_status'])
    .where('e.merchant_id', '=', scope.merchant_id)
    .where('e.is_sandbox', '=', scope.is_sandbox)
    .where('e.created_at', '>=', new Date(deps.clock.now().getTime() - EVENTS_RETENTION_MS));
  if (query.type) select = select.where('e.type', '=', query.type);
  if (query.resource_id) select = select.where('e.resource_id', '=', query.resource_id);
  if (query.delivered === true) select = select.where('d.status', '=', 'succeeded');
  if (query.delivered === false) select = select.where((eb) => eb.or([eb('d.status', 'is', null), eb('d.status', '!=', 'succeeded')]));
  if (position) select = select.where(sql<boolean>`(e.created_at, e.seq) < (${position.created_at}, ${Number(position.id)})`);
  const rows = await select.orderBy('e.created_at', 'desc').orderBy('e.seq', 'desc').limit(query.limit + 1).execute();
  const keyed = rows.map((row) => ({ ...row, event_id: row.id, id: String(row.seq) }));
  return toPage(keyed, query.limit, (row): EventView => ({
    id: row.event_id,
    type: row.type,
    resource_type: row.resource_type,
    resource_id: row.resource_id,
    created_at: iso(row.created_at),
    delivery_status: row.delivery_status,
    payload: row.payload,
  }));
}

export interface AttemptView {
  attempt_number: number;
  url: string;
  succeeded: boolean;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_excerpt: string | null;
  started_at: string;
}

export interface DeliveryView {
  id: string;
  event_id: string;
  event_type: string;
  resource_id: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  delivered_at: string | null;
  created_at: string;
  attempts: AttemptView[];
}

function presentDelivery(row: DeliveryRow & { event_type: string }, attempts: readonly AttemptRow[]): DeliveryView {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    resource_id: row.resource_id,
    status: row.status,
    attempt_count: row.attempt_count,
    next_attempt_at: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    last_attempt_at: iso(row.last_attempt_at),
    last_status_code: row.last_status_code,
    delivered_at: iso(row.delivered_at),
    created_at: iso(row.created_at),
    attempts: [...attempts]
      .sort((a, b) => a.attempt_number - b.attempt_number)
      .map((attempt) => ({
        attempt_number: attempt.attempt_number,
        url: attempt.url,
        succeeded: attempt.succeeded,
        status_code: attempt.status_code,
        error: attempt.error,
        duration_ms: attempt.duration_ms,
        response_excerpt: attempt.response_excerpt,
        started_at: iso(attempt.started_at),
      })),
  };
}

async function attemptsOf(db: Db, delivery_ids: string[]): Promise<Map<string, AttemptRow[]>> {
  if (delivery_ids.length === 0) return new Map();
  const rows = await db.selectFrom('webhook_attempts').selectAll().where('delivery_id', 'in', delivery_ids).execute();
  return Map.groupBy(rows, (row) => row.delivery_id);
}

export interface ListDeliveriesQuery {
  status?: DeliveryStatus[] | undefined;
  event_id?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

/** Delivery history: each delivery with every attempt's status, duration and response excerpt. */
export async function listDeliveries(deps: WebhooksDeps, scope: MerchantScope, query: ListDeliveriesQuery) {
  const position = decodeCursor(query.cursor);
  let select = deps.db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .selectAll('d')
    .select('e.type as event_type')
    .where('d.merchant_id', '=', scope.merchant_id)
    .where('d.is_sandbox', '=', scope.is_sandbox);
  if (query.status?.length) select = select.where('d.status', 'in', query.status);
  if (query.event_id) select = select.where('d.event_id', '=', query.event_id);
  if (position) select = select.where(afterCursor(position, 'd'));
  const rows = await select.orderBy('d.created_at', 'desc').orderBy('d.id', 'desc').limit(query.limit + 1).execute();
  const attempts = await attemptsOf(deps.db, rows.map((row) => row.id));
  return toPage(rows, query.limit, (row) => presentDelivery(row, attempts.get(row.id) ?? []));
}

async function requireEndpoint(executor: Db, scope: MerchantScope): Promise<void> {
  const merchant = await executor.selectFrom('merchants').select('webhook_url').where('id', '=', scope.merchant_id).executeTakeFirstOrThrow();
  if (!merchant.webhook_url) throw new AppError('WEBHOOK_ENDPOINT_NOT_SET', 'Set a webhook endpoint first (PUT /v1/webhook-endpoint)');
}

/**
 * Queues one delivery again with a fresh retry schedule (any status; a delivery being sent right now is left to
 * finish). Ordering still holds: a later event of the same resource waits for it.
 */
export async function redeliver(deps: WebhooksDeps, scope: MerchantScope, delivery_id: string): Promise<DeliveryView> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const found = await trx
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('id', '=', delivery_id)
      .where('merchant_id', '=', scope.merchant_id)
      .where('is_sandbox', '=', scope.is_sandbox)
      .forUpdate()
      .executeTakeFirst();
    if (!found) throw notFound('Webhook delivery');
    await requireEndpoint(trx, scope);
    const in_flight = found.status === 'pending' && found.claimed_until !== null && found.claimed_until > now;
    if (!in_flight) {
      await trx
        .updateTable('webhook_deliveries')
        .set({ status: 'pending', retry_count: 0, next_attempt_at: now, claim_token: null, claimed_until: null })
        .where('id', '=', delivery_id)
        .execute();
      await sql`select pg_notify(${EVENTS_CHANNEL}, ${found.event_id})`.execute(trx);
    }
    const row = await trx
      .selectFrom('webhook_deliveries as d')
      .innerJoin('events as e', 'e.id', 'd.event_id')
      .selectAll('d')
      .select('e.type as event_type')
      .where('d.id', '=', delivery_id)
      .executeTakeFirstOrThrow();
    const attempts = await trx.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', delivery_id).execute();
    return presentDelivery(row, attempts);
  });
}

/** Re-queues every delivery of this merchant and mode that failed (or found no endpoint) since `since`. */
export async function recoverSince(deps: WebhooksDeps, scope: MerchantScope, since: string): Promise<{ requeued: number; since: string }> {
  const now = deps.clock.now();
  const since_at = new Date(since);
  return deps.db.transaction().execute(async (trx) => {
    await requireEndpoint(trx, scope);
    const rows = await trx
      .updateTable('webhook_deliveries')
      .set({ status: 'pending', retry_count: 0, next_attempt_at: now, claim_token: null, claimed_until: null })
      .where('merchant_id', '=', scope.merchant_id)
      .where('is_sandbox', '=', scope.is_sandbox)
      .where('status', 'in', ['failed', 'skipped'])
      .where('created_at', '>=', since_at)
      .returning('id')
      .execute();
    if (rows.length > 0) await sql`select pg_notify(${EVENTS_CHANNEL}, 'recover')`.execute(trx);
    return { requeued: rows.length, since: since_at.toISOString() };
  });
}
