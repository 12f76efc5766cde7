import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, Trx } from '../../db/database.ts';
import { notFound } from '../../lib/errors.ts';
import {
  applyEndpointUpdate,
  assertTargetAllowed,
  type CreateEndpointInput,
  type EndpointView,
  type EndpointWithSecret,
  MAX_ENDPOINTS_PER_MODE,
  normalizeEvents,
  presentEndpoint,
  skipPendingDeliveries,
  type UpdateEndpointInput,
  type WebhooksDeps,
} from './endpoints.ts';
import { endpointLimit } from './errors.ts';
import { generateWebhookSecret } from './signing.ts';
import type { EndpointRow } from './tables.ts';

/**
 * A seller's own webhook endpoints (DESIGN 3b): managed with its seller key, live (seller keys are), and sent the leg
 * events about that seller's legs (`leg.awaiting_payee`) by the same trigger, dispatcher, signing and retry schedule
 * as a merchant's. Another seller's endpoint, or a merchant's, is 404. Every function is one transaction.
 */

async function findSellerEndpoint(executor: Trx | Db, seller_id: string, id: string, lock: boolean) {
  let select = executor
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', id)
    .where('seller_id', '=', seller_id)
    .where('deleted_at', 'is', null);
  if (lock) select = select.forUpdate();
  const row = await select.executeTakeFirst();
  if (!row) throw notFound('Webhook endpoint');
  return row;
}

export async function createSellerEndpoint(
  deps: WebhooksDeps,
  seller_id: string,
  input: CreateEndpointInput,
): Promise<EndpointWithSecret> {
  await assertTargetAllowed(deps, false, input.url);
  return deps.db.transaction().execute(async (trx) => {
    // Concurrent creates for one seller count one after another, so the limit holds under a race; an advisory lock,
    // not the seller's row, which the payment creates' reservations lock.
    await sql`select pg_advisory_xact_lock(hashtextextended(${`mpay:seller-endpoints:${seller_id}`}, 0))`.execute(trx);
    const count = await trx
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('seller_id', '=', seller_id)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    if (Number(count.n) >= MAX_ENDPOINTS_PER_MODE) throw endpointLimit(MAX_ENDPOINTS_PER_MODE);
    const now = deps.clock.now();
    const id = randomUUID();
    const secret = generateWebhookSecret();
    const row: EndpointRow = await trx
      .insertInto('webhook_endpoints')
      .values({
        id,
        merchant_id: null,
        seller_id,
        is_sandbox: false,
        url: input.url,
        description: input.description ?? null,
        enabled_events: JSON.stringify(normalizeEvents(input.enabled_events)),
        disabled: input.disabled ?? false,
        is_default: false,
        secret_sealed: deps.box.seal(secret, id),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { ...presentEndpoint(row, now), secret };
  });
}

export async function listSellerEndpoints(deps: WebhooksDeps, seller_id: string): Promise<EndpointView[]> {
  const rows = await deps.db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('seller_id', '=', seller_id)
    .where('deleted_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const now = deps.clock.now();
  return rows.map((row) => presentEndpoint(row, now));
}

export async function updateSellerEndpoint(
  deps: WebhooksDeps,
  seller_id: string,
  id: string,
  input: UpdateEndpointInput,
): Promise<EndpointView> {
  if (input.url !== undefined) await assertTargetAllowed(deps, false, input.url);
  return deps.db.transaction().execute(async (trx) => {
    await findSellerEndpoint(trx, seller_id, id, true);
    return applyEndpointUpdate(trx, id, input, deps.clock.now());
  });
}

/** Deletes a seller's endpoint (a tombstone, as a merchant's); its pending deliveries are skipped. */
export async function deleteSellerEndpoint(
  deps: WebhooksDeps,
  seller_id: string,
  id: string,
): Promise<{ id: string; deleted: true }> {
  return deps.db.transaction().execute(async (trx) => {
    await findSellerEndpoint(trx, seller_id, id, true);
    const now = deps.clock.now();
    await trx.updateTable('webhook_endpoints').set({ deleted_at: now, updated_at: now }).where('id', '=', id).execute();
    await skipPendingDeliveries(trx, id);
    return { id, deleted: true as const };
  });
}
