import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, Trx } from '../../db/database.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { iso } from '../../http/schemas.ts';
import type { Clock } from '../../lib/clock.ts';
import { OWNERSHIP, ownedBy } from '../../http/ownership.ts';
import { lockMerchant } from '../merchants/issued-secret.ts';
import { generateWebhookSecret } from './signing.ts';
import type { SecretBox } from './secret-box.ts';
import type { DeliveryRow, EndpointRow } from './tables.ts';
import { checkTargetAtRegistration } from './targets.ts';
import { present } from '../../lib/assert.ts';
import { endpointLimit, endpointNotSet, testEventToDisabledEndpoint, urlForbidden } from './errors.ts';
import { recordEvent, wakeDispatchers } from '../events/outbox.ts';
import type { EndpointView } from './schema.ts';

export type { EndpointView } from './schema.ts';

/**
 * Webhook endpoints as a resource, per merchant and mode. A credential sees and changes only the
 * endpoints of its own mode (`scope.is_sandbox`: a live key, a live merchant JWT or dashboard session manage live
 * endpoints; test and sandbox keys, or a JWT/session carrying mode sandbox, manage sandbox ones); another merchant's
 * or another mode's endpoint is 404, as everywhere in webhooks. Every function is one transaction.
 */
export interface WebhooksDeps {
  db: Db;
  clock: Clock;
  box: SecretBox;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: private and loopback targets for either mode (closed deployments). */
  allow_private_targets: boolean;
  /** PUBLIC_BASE_URL: never a target. */
  self_origin?: string;
}

export const MAX_ENDPOINTS_PER_MODE = 16;
export const ALL_EVENTS = '*';
export const DEFAULT_ROTATION_GRACE_SECONDS = 24 * 3600;
export const MAX_ROTATION_GRACE_SECONDS = 7 * 24 * 3600;

export type EndpointWithSecret = EndpointView & { secret: string };

export interface CreateEndpointInput {
  url: string;
  description?: string | null | undefined;
  enabled_events?: string[] | undefined;
  disabled?: boolean | undefined;
}

export type UpdateEndpointInput = Partial<CreateEndpointInput>;

export function presentEndpoint(row: EndpointRow, now: Date): EndpointView {
  const overlapping =
    row.previous_secret_sealed !== null &&
    row.previous_secret_expires_at !== null &&
    row.previous_secret_expires_at > now;
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    enabled_events: row.enabled_events,
    disabled: row.disabled,
    is_default: row.is_default,
    mode: row.is_sandbox ? 'sandbox' : 'live',
    previous_secret_expires_at: overlapping ? iso(row.previous_secret_expires_at) : null,
    created_at: present(iso(row.created_at), 'created_at is not null'),
    updated_at: present(iso(row.updated_at), 'updated_at is not null'),
  };
}

/** `*` anywhere means every type; otherwise the distinct types in the order given. */
export function normalizeEvents(events: readonly string[] | undefined): string[] {
  if (!events || events.includes(ALL_EVENTS)) return [ALL_EVENTS];
  return [...new Set(events)];
}

/** Refuses a target the SSRF guard does not allow for this mode: 400 WEBHOOK_URL_FORBIDDEN. */
/** Writes the fields an update names (a merchant's or a seller's endpoint, found and locked by the caller). */
export async function applyEndpointUpdate(
  trx: Trx,
  id: string,
  input: UpdateEndpointInput,
  now: Date,
): Promise<EndpointView> {
  const row = await trx
    .updateTable('webhook_endpoints')
    .set({
      ...(input.url !== undefined ? { url: input.url } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.enabled_events !== undefined
        ? { enabled_events: JSON.stringify(normalizeEvents(input.enabled_events)) }
        : {}),
      ...(input.disabled !== undefined ? { disabled: input.disabled } : {}),
      updated_at: now,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return presentEndpoint(row, now);
}

/** A deleted endpoint's deliveries still pending are skipped: nothing is sent to it any more. */
export async function skipPendingDeliveries(trx: Trx, endpoint_id: string): Promise<void> {
  await trx
    .updateTable('webhook_deliveries')
    .set({ status: 'skipped', claim_token: null, claimed_until: null, last_error: 'webhook endpoint deleted' })
    .where('endpoint_id', '=', endpoint_id)
    .where('status', '=', 'pending')
    .execute();
}

export async function assertTargetAllowed(
  deps: Pick<WebhooksDeps, 'allow_private_targets' | 'self_origin'>,
  is_sandbox: boolean,
  url: string,
): Promise<void> {
  const reason = await checkTargetAtRegistration(url, {
    is_sandbox,
    allow_private: deps.allow_private_targets,
    ...(deps.self_origin ? { self_origin: deps.self_origin } : {}),
  });
  if (reason) throw urlForbidden(is_sandbox, reason);
}

async function findEndpoint(trx: Trx | Db, scope: MerchantScope, id: string, lock: boolean): Promise<EndpointRow> {
  let select = trx.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).where('deleted_at', 'is', null);
  if (lock) select = select.forUpdate();
  // A seller's endpoint (no merchant) is no merchant's: 404.
  return ownedBy(await select.executeTakeFirst(), (row) => row.merchant_id ?? '', scope, OWNERSHIP.webhook_endpoint);
}

export async function insertEndpoint(
  deps: WebhooksDeps,
  trx: Trx,
  scope: MerchantScope,
  input: CreateEndpointInput & { is_default: boolean; secret: string },
): Promise<EndpointRow> {
  const count = await trx
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('merchant_id', '=', scope.merchant_id)
    .where('is_sandbox', '=', scope.is_sandbox)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  if (Number(count.n) >= MAX_ENDPOINTS_PER_MODE) {
    throw endpointLimit(MAX_ENDPOINTS_PER_MODE);
  }
  const now = deps.clock.now();
  const id = randomUUID();
  return trx
    .insertInto('webhook_endpoints')
    .values({
      id,
      merchant_id: scope.merchant_id,
      is_sandbox: scope.is_sandbox,
      url: input.url,
      description: input.description ?? null,
      enabled_events: JSON.stringify(normalizeEvents(input.enabled_events)),
      disabled: input.disabled ?? false,
      is_default: input.is_default,
      secret_sealed: deps.box.seal(input.secret, id),
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function createEndpoint(
  deps: WebhooksDeps,
  scope: MerchantScope,
  input: CreateEndpointInput,
): Promise<EndpointWithSecret> {
  await assertTargetAllowed(deps, scope.is_sandbox, input.url);
  return deps.db.transaction().execute(async (trx) => {
    await lockMerchant(trx, scope.merchant_id);
    const secret = generateWebhookSecret();
    const row = await insertEndpoint(deps, trx, scope, { ...input, is_default: false, secret });
    return { ...presentEndpoint(row, deps.clock.now()), secret };
  });
}

export async function listEndpoints(deps: WebhooksDeps, scope: MerchantScope): Promise<EndpointView[]> {
  const rows = await deps.db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('merchant_id', '=', scope.merchant_id)
    .where('is_sandbox', '=', scope.is_sandbox)
    .where('deleted_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const now = deps.clock.now();
  return rows.map((row) => presentEndpoint(row, now));
}

export async function getEndpointById(deps: WebhooksDeps, scope: MerchantScope, id: string): Promise<EndpointView> {
  return presentEndpoint(await findEndpoint(deps.db, scope, id, false), deps.clock.now());
}

export async function updateEndpoint(
  deps: WebhooksDeps,
  scope: MerchantScope,
  id: string,
  input: UpdateEndpointInput,
): Promise<EndpointView> {
  if (input.url !== undefined) await assertTargetAllowed(deps, scope.is_sandbox, input.url);
  return deps.db.transaction().execute(async (trx) => {
    await findEndpoint(trx, scope, id, true);
    return applyEndpointUpdate(trx, id, input, deps.clock.now());
  });
}

/**
 * Deletes an endpoint (kept as a tombstone, so its delivery history stays readable); its deliveries still pending are
 * skipped, and no new event is queued for it.
 */
export async function deleteEndpoint(
  deps: WebhooksDeps,
  scope: MerchantScope,
  id: string,
): Promise<{ id: string; deleted: true }> {
  return deps.db.transaction().execute(async (trx) => {
    await findEndpoint(trx, scope, id, true);
    const now = deps.clock.now();
    await trx
      .updateTable('webhook_endpoints')
      .set({ deleted_at: now, is_default: false, updated_at: now })
      .where('id', '=', id)
      .execute();
    await skipPendingDeliveries(trx, id);
    return { id, deleted: true as const };
  });
}

export async function rotate(
  deps: WebhooksDeps,
  trx: Trx,
  row: EndpointRow,
  grace_seconds: number,
): Promise<EndpointWithSecret> {
  const now = deps.clock.now();
  const secret = generateWebhookSecret();
  const updated = await trx
    .updateTable('webhook_endpoints')
    .set({
      secret_sealed: deps.box.seal(secret, row.id),
      // The outgoing secret keeps signing (second `v1,` signature) until the grace period ends; 0 drops it at once.
      previous_secret_sealed: grace_seconds > 0 ? row.secret_sealed : null,
      previous_secret_expires_at: grace_seconds > 0 ? new Date(now.getTime() + grace_seconds * 1000) : null,
      updated_at: now,
    })
    .where('id', '=', row.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { ...presentEndpoint(updated, now), secret };
}

/** New secret shown once; the old one keeps signing beside it for `grace_seconds` (default 24 h). */
export async function rotateEndpointSecret(
  deps: WebhooksDeps,
  scope: MerchantScope,
  id: string,
  grace_seconds = DEFAULT_ROTATION_GRACE_SECONDS,
): Promise<EndpointWithSecret> {
  return deps.db
    .transaction()
    .execute(async (trx) => rotate(deps, trx, await findEndpoint(trx, scope, id, true), grace_seconds));
}

/**
 * The current signing secret, for a signed-in developer who lost it (the dashboard's "reveal"). Secrets are sealed at
 * rest, not hashed, precisely so the service can sign with them; showing one to its own merchant reveals nothing new.
 */
export async function revealEndpointSecret(
  deps: WebhooksDeps,
  scope: MerchantScope,
  id: string,
): Promise<EndpointWithSecret> {
  const row = await findEndpoint(deps.db, scope, id, false);
  const now = deps.clock.now();
  const [secret] = signingSecrets(deps.box, row, now);
  assert(secret !== undefined, 'an endpoint always has a current secret');
  return { ...presentEndpoint(row, now), secret };
}

/** The secrets a delivery is signed with now: the newest first, then the previous one while its overlap lasts. */
export function signingSecrets(
  box: SecretBox,
  row: Pick<EndpointRow, 'id' | 'secret_sealed' | 'previous_secret_sealed' | 'previous_secret_expires_at'>,
  now: Date,
): string[] {
  const secrets = [box.open(row.secret_sealed, row.id)];
  if (row.previous_secret_sealed && row.previous_secret_expires_at && row.previous_secret_expires_at > now)
    secrets.push(box.open(row.previous_secret_sealed, row.id));
  return secrets;
}

/** The endpoints of the caller's merchant and mode that receive events: not deleted, not disabled. */
function activeEndpoints(executor: Trx | Db, scope: MerchantScope) {
  return executor
    .selectFrom('webhook_endpoints')
    .select('id')
    .where('merchant_id', '=', scope.merchant_id)
    .where('is_sandbox', '=', scope.is_sandbox)
    .where('deleted_at', 'is', null)
    .where('disabled', '=', false);
}

/** Whether the caller's mode has an endpoint deliveries can go to (redeliver and recover need one). */
export async function requireActiveEndpoint(executor: Trx | Db, scope: MerchantScope): Promise<void> {
  if (!(await activeEndpoints(executor, scope).executeTakeFirst())) {
    throw endpointNotSet(scope.is_sandbox);
  }
}

/** The active endpoints subscribed to `type`: the trigger's rule (`mpay_enqueue_webhook_delivery`), for re-queued skipped deliveries. */
export async function subscribedEndpointIds(trx: Trx, scope: MerchantScope, type: string): Promise<string[]> {
  const rows = await activeEndpoints(trx, scope)
    .where(sql<boolean>`(enabled_events @> '["*"]'::jsonb or enabled_events @> jsonb_build_array(${type}::text))`)
    .orderBy('created_at')
    .execute();
  return rows.map((row) => row.id);
}

/**
 * A delivery of one event to one endpoint, due at `now` and never attempted: the row the fan-out trigger
 * (`mpay_enqueue_webhook_delivery`) writes, for the deliveries this module adds itself.
 */
export function pendingDelivery(
  event: Pick<DeliveryRow, 'event_id' | 'event_seq' | 'resource_id' | 'ordering_key' | 'created_at'>,
  scope: MerchantScope,
  endpoint_id: string,
  now: Date,
): DeliveryRow {
  const { event_id, event_seq, resource_id, ordering_key, created_at } = event;
  return {
    id: randomUUID(),
    event_id,
    event_seq,
    resource_id,
    ordering_key,
    created_at,
    merchant_id: scope.merchant_id,
    is_sandbox: scope.is_sandbox,
    seller_id: null,
    endpoint_id,
    status: 'pending',
    attempt_count: 0,
    retry_count: 0,
    next_attempt_at: now,
    claim_token: null,
    claimed_until: null,
    last_attempt_at: null,
    last_status_code: null,
    last_error: null,
    delivered_at: null,
  };
}

/** The type of the test event the dashboard sends to one endpoint. */
export const TEST_EVENT_TYPE = 'webhook.test';

/**
 * Sends a test event to one endpoint, signed and retried like any other. The outbox fans an event out to every
 * subscribed endpoint; this one is meant for one, so the others' deliveries of it are skipped in the same transaction
 * and the chosen endpoint gets one even when it does not subscribe to everything.
 */
export async function sendTestEvent(
  deps: WebhooksDeps,
  scope: MerchantScope,
  endpoint_id: string,
): Promise<{ event_id: string; url: string }> {
  const now = deps.clock.now();
  const result = await deps.db.transaction().execute(async (trx) => {
    const endpoint = await findEndpoint(trx, scope, endpoint_id, true);
    if (endpoint.disabled) throw testEventToDisabledEndpoint();
    const envelope = await recordEvent(trx, now, {
      merchant_id: scope.merchant_id,
      is_sandbox: scope.is_sandbox,
      type: TEST_EVENT_TYPE,
      resource_type: 'webhook_endpoint',
      resource_id: endpoint.id,
      data: { ...presentEndpoint(endpoint, now) },
    });
    await trx
      .updateTable('webhook_deliveries')
      .set({ status: 'skipped', last_error: 'test event for another endpoint' })
      .where('event_id', '=', envelope.id)
      .where((eb) => eb.or([eb('endpoint_id', 'is', null), eb('endpoint_id', '<>', endpoint.id)]))
      .execute();
    const ours = await trx
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('event_id', '=', envelope.id)
      .where('endpoint_id', '=', endpoint.id)
      .executeTakeFirst();
    if (!ours) {
      const row = await trx.selectFrom('events').select('seq').where('id', '=', envelope.id).executeTakeFirstOrThrow();
      await trx
        .insertInto('webhook_deliveries')
        .values(
          pendingDelivery(
            {
              event_id: envelope.id,
              event_seq: row.seq,
              resource_id: endpoint.id,
              ordering_key: endpoint.id,
              created_at: now,
            },
            scope,
            endpoint.id,
            now,
          ),
        )
        .execute();
    }
    return { event_id: envelope.id, url: endpoint.url };
  });
  await wakeDispatchers(deps.db);
  return result;
}
