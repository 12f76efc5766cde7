import { sql } from 'kysely';
import type { Db, Trx } from '../../db/database.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { listPage } from '../../http/pagination.ts';
import { iso } from '../../http/schemas.ts';
import { OWNERSHIP, owned, ownedBy } from '../../http/ownership.ts';
import { wakeDispatchers } from '../events/outbox.ts';
import { pendingDelivery, requireActiveEndpoint, subscribedEndpointIds, type WebhooksDeps } from './endpoints.ts';
import type { AttemptRow, DeliveryRow, DeliveryStatus } from './tables.ts';
import { deliveryEndpointDeleted } from './errors.ts';
import type { DeliveryView, EventView } from './schema.ts';

export type { AttemptView, DeliveryView, EventView } from './schema.ts';

export type { WebhooksDeps } from './endpoints.ts';

// Delivery rows are not inserted here: the trigger `events_enqueue_webhook_delivery` writes one per
// subscribed endpoint in the transaction that writes the event (see tables.ts). This module reads them, re-queues
// them (redeliver, recover) and the dispatcher sends them.

/** `GET /v1/events` looks back this far. */
export const EVENTS_RETENTION_MS = 30 * 24 * 3600 * 1000;

/**
 * An event's delivery status over its deliveries (one per subscribed endpoint): pending while any is, then failed if
 * any failed, succeeded if any reached an endpoint, else skipped (no endpoint was subscribed).
 */
const EVENT_DELIVERY_STATUS = sql<DeliveryStatus | null>`(
  select case
    when bool_or(d.status = 'pending') then 'pending'
    when bool_or(d.status = 'failed') then 'failed'
    when bool_or(d.status = 'succeeded') then 'succeeded'
    else 'skipped' end
  from webhook_deliveries d where d.event_id = e.id and d.seller_id is null)`;

export interface ListEventsQuery {
  type?: string | undefined;
  resource_id?: string | undefined;
  delivered?: boolean | undefined;
  cursor?: string | undefined;
  limit: number;
}

export async function listEvents(deps: WebhooksDeps, scope: MerchantScope, query: ListEventsQuery) {
  // Keyset on (created_at, seq): events written in one transaction share a timestamp, and seq keeps their order.
  let select = deps.db
    .selectFrom('events as e')
    .select([
      'e.id',
      'e.seq',
      'e.type',
      'e.resource_type',
      'e.resource_id',
      'e.created_at',
      'e.payload',
      EVENT_DELIVERY_STATUS.as('delivery_status'),
    ])
    .where('e.merchant_id', '=', scope.merchant_id)
    .where('e.is_sandbox', '=', scope.is_sandbox)
    .where('e.created_at', '>=', new Date(deps.clock.now().getTime() - EVENTS_RETENTION_MS));
  if (query.type) select = select.where('e.type', '=', query.type);
  if (query.resource_id) select = select.where('e.resource_id', '=', query.resource_id);
  if (query.delivered === true) select = select.where(sql<boolean>`${EVENT_DELIVERY_STATUS} = 'succeeded'`);
  if (query.delivered === false)
    select = select.where(sql<boolean>`${EVENT_DELIVERY_STATUS} is distinct from 'succeeded'`);
  const keyset = {
    created_at: 'e.created_at',
    id: 'e.seq',
    id_format: 'sequence' as const,
    positionOf: (row: { created_at: Date; seq: number | string }) => ({
      created_at: row.created_at,
      id: String(row.seq),
    }),
  };
  return listPage(
    select,
    query,
    (row): EventView => ({
      id: row.id,
      type: row.type,
      resource_type: row.resource_type,
      resource_id: row.resource_id,
      created_at: iso(row.created_at),
      delivery_status: row.delivery_status,
      payload: row.payload,
    }),
    keyset,
  );
}

function presentDelivery(row: DeliveryRow & { event_type: string }, attempts: readonly AttemptRow[]): DeliveryView {
  return {
    id: row.id,
    event_id: row.event_id,
    endpoint_id: row.endpoint_id,
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
  endpoint_id?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

/** Delivery history: each delivery with every attempt's status, duration and response excerpt. */
export async function listDeliveries(deps: WebhooksDeps, scope: MerchantScope, query: ListDeliveriesQuery) {
  let select = deps.db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .selectAll('d')
    .select('e.type as event_type')
    .where('d.merchant_id', '=', scope.merchant_id)
    .where('d.is_sandbox', '=', scope.is_sandbox)
    .where('d.seller_id', 'is', null);
  if (query.status?.length) select = select.where('d.status', 'in', query.status);
  if (query.event_id) select = select.where('d.event_id', '=', query.event_id);
  if (query.endpoint_id) select = select.where('d.endpoint_id', '=', query.endpoint_id);
  const page = await listPage(select, query, (row) => row, { table: 'd' });
  const attempts = await attemptsOf(
    deps.db,
    page.data.map((row) => row.id),
  );
  return { ...page, data: page.data.map((row) => presentDelivery(row, attempts.get(row.id) ?? [])) };
}

const REQUEUE = { status: 'pending' as const, retry_count: 0, claim_token: null, claimed_until: null };

/**
 * Puts deliveries back in the queue. A `skipped` row without endpoint (none was subscribed when its event was
 * written) goes to the endpoints subscribed now: the row itself to the first, a new row to each other one.
 */
async function requeue(
  trx: Trx,
  scope: MerchantScope,
  rows: readonly Pick<
    DeliveryRow,
    'id' | 'event_id' | 'event_seq' | 'resource_id' | 'ordering_key' | 'endpoint_id' | 'created_at'
  >[],
  now: Date,
): Promise<number> {
  let requeued = 0;
  for (const row of rows) {
    if (row.endpoint_id !== null) {
      await trx
        .updateTable('webhook_deliveries')
        .set({ ...REQUEUE, next_attempt_at: now })
        .where('id', '=', row.id)
        .execute();
      requeued += 1;
      continue;
    }
    const event = await trx
      .selectFrom('events')
      .select('type')
      .where('id', '=', row.event_id)
      .executeTakeFirstOrThrow();
    const [first, ...others] = await subscribedEndpointIds(trx, scope, event.type);
    if (!first) continue;
    await trx
      .updateTable('webhook_deliveries')
      .set({ ...REQUEUE, endpoint_id: first, next_attempt_at: now, last_error: null })
      .where('id', '=', row.id)
      .execute();
    for (const endpoint_id of others) {
      await trx
        .insertInto('webhook_deliveries')
        .values(pendingDelivery(row, scope, endpoint_id, now))
        .onConflict((c) => c.columns(['event_id', 'endpoint_id']).doNothing())
        .execute();
    }
    requeued += 1 + others.length;
  }
  return requeued;
}

/**
 * Queues one delivery again with a fresh retry schedule (any status; a delivery being sent right now is left to
 * finish). Ordering still holds: a later event of the same resource waits for it. A delivery to a deleted endpoint
 * cannot be sent again (409 WEBHOOK_ENDPOINT_NOT_SET).
 */
export async function redeliver(deps: WebhooksDeps, scope: MerchantScope, delivery_id: string): Promise<DeliveryView> {
  const now = deps.clock.now();
  const result = await deps.db.transaction().execute(async (trx) => {
    const found = owned(
      await trx
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('id', '=', delivery_id)
        // A delivery to a seller's endpoint is the seller's, not the event's merchant's.
        .where('seller_id', 'is', null)
        .forUpdate()
        .executeTakeFirst(),
      scope,
      OWNERSHIP.webhook_delivery,
    );
    await requireActiveEndpoint(trx, scope);
    if (found.endpoint_id !== null) {
      const endpoint = await trx
        .selectFrom('webhook_endpoints')
        .select(['deleted_at'])
        .where('id', '=', found.endpoint_id)
        .executeTakeFirstOrThrow();
      if (endpoint.deleted_at !== null) throw deliveryEndpointDeleted();
    }
    const in_flight = found.status === 'pending' && found.claimed_until !== null && found.claimed_until > now;
    if (!in_flight) await requeue(trx, scope, [found], now);
    const row = await trx
      .selectFrom('webhook_deliveries as d')
      .innerJoin('events as e', 'e.id', 'd.event_id')
      .selectAll('d')
      .select('e.type as event_type')
      .where('d.id', '=', delivery_id)
      .executeTakeFirstOrThrow();
    const attempts = await trx
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('delivery_id', '=', delivery_id)
      .execute();
    return { requeued: !in_flight, view: presentDelivery(row, attempts) };
  });
  // after the commit: a NOTIFY inside the transaction would queue its commit behind every other NOTIFY's
  if (result.requeued) await wakeDispatchers(deps.db);
  return result.view;
}

/**
 * Re-queues every delivery of this merchant and mode that failed (or found no endpoint) since `since`, optionally of
 * one endpoint only. Deliveries of deleted endpoints stay as they are.
 */
export async function recoverSince(
  deps: WebhooksDeps,
  scope: MerchantScope,
  since: string,
  endpoint_id?: string,
): Promise<{ requeued: number; since: string }> {
  const now = deps.clock.now();
  const since_at = new Date(since);
  const result = await deps.db.transaction().execute(async (trx) => {
    if (endpoint_id !== undefined) {
      const endpoint = await trx
        .selectFrom('webhook_endpoints')
        .select(['merchant_id', 'is_sandbox'])
        .where('id', '=', endpoint_id)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      ownedBy(endpoint, (row) => row.merchant_id ?? '', scope, OWNERSHIP.webhook_endpoint);
    }
    await requireActiveEndpoint(trx, scope);
    let select = trx
      .selectFrom('webhook_deliveries as d')
      .leftJoin('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
      .select(['d.id', 'd.event_id', 'd.event_seq', 'd.resource_id', 'd.ordering_key', 'd.endpoint_id', 'd.created_at'])
      .where('d.merchant_id', '=', scope.merchant_id)
      .where('d.is_sandbox', '=', scope.is_sandbox)
      .where('d.seller_id', 'is', null)
      .where('d.status', 'in', ['failed', 'skipped'])
      .where('d.created_at', '>=', since_at)
      .where((eb) => eb.or([eb('d.endpoint_id', 'is', null), eb('w.deleted_at', 'is', null)]))
      .orderBy('d.event_seq')
      .forUpdate('d');
    if (endpoint_id !== undefined) select = select.where('d.endpoint_id', '=', endpoint_id);
    const requeued = await requeue(trx, scope, await select.execute(), now);
    return { requeued, since: since_at.toISOString() };
  });
  // after the commit: a NOTIFY inside the transaction would queue its commit behind every other NOTIFY's
  if (result.requeued > 0) await wakeDispatchers(deps.db);
  return result;
}
