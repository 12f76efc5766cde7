import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Db, Trx } from '../db/database.ts';
import { canonicalJson, sha256Hex } from '../lib/crypto.ts';
import type { Clock } from '../lib/clock.ts';
import { merchantScope } from './auth.ts';
import type { MerchantScope } from './principal.ts';
import { ok, UUID_PATTERN } from './schemas.ts';
import { present } from '../lib/assert.ts';
import { idempotencyKeyConflict, idempotencyKeyMalformed, idempotencyKeyRequired } from './http-errors.ts';

export const IDEMPOTENCY_KEY_TTL_MS = 7 * 24 * 3600 * 1000;
const UUID = new RegExp(UUID_PATTERN);
const ANY_KEY = /^[\x21-\x7e]{1,255}$/;

export interface IdempotentResult<T> {
  status: number;
  body: T;
}

export interface IdempotencyOptions {
  /** Required routes demand a UUID key (400 otherwise); optional routes take any 1-255 visible ASCII characters. */
  required: boolean;
}

/** The header of routes whose key is required (openapi.ts documents it as a required UUID; `idempotent()` enforces it). */
export const IdempotencyKeyHeader = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: 'A UUID; required' })),
});

/**
 * The shared idempotency mechanism. The key row is inserted in the same transaction as the business rows:
 * a concurrent duplicate blocks on the unique index until the first commits, then replays its response.
 * A request that fails (validation or a domain error) rolls back, so nothing is stored and a retry runs anew.
 * Same key + same body: the stored status and body with `Idempotent-Replayed: true`.
 * Same key + other body: 409 IDEMPOTENCY_KEY_CONFLICT.
 */
export async function idempotent<T>(
  deps: { db: Db; clock: Clock },
  request: FastifyRequest,
  reply: FastifyReply,
  options: IdempotencyOptions,
  run: (trx: Trx) => Promise<IdempotentResult<T>>,
): Promise<T> {
  const claim_request = idempotencyRequest(request, options);
  if (claim_request === undefined) {
    const result = await deps.db.transaction().execute(run);
    reply.status(result.status);
    return result.body;
  }
  const { identity, fingerprint } = claim_request;
  const now = deps.clock.now();

  const outcome = await deps.db.transaction().execute(async (trx) => {
    const claim = () =>
      trx
        .insertInto('idempotency_keys')
        .values({ ...identity, fingerprint, created_at: now })
        .onConflict((conflict) => conflict.columns(['merchant_id', 'is_sandbox', 'method', 'path', 'key']).doNothing())
        .returning('id')
        .executeTakeFirst();

    let claimed = await claim();
    if (!claimed) {
      const existing = await findKeyRow(trx, identity);
      if (!existing) throw new Error('idempotency key row vanished after its insert conflicted');
      if (now.getTime() - existing.created_at.getTime() > IDEMPOTENCY_KEY_TTL_MS) {
        await trx.deleteFrom('idempotency_keys').where('id', '=', existing.id).execute();
        claimed = await claim();
      } else {
        if (existing.fingerprint !== fingerprint) {
          throw idempotencyKeyConflict();
        }
        return { replayed: true, status: existing.response_status ?? 200, body: existing.response_body as T };
      }
    }
    const result = await run(trx);
    await trx
      .updateTable('idempotency_keys')
      .set({ response_status: result.status, response_body: JSON.stringify(result.body) })
      .where('id', '=', present(claimed, 'the key was claimed or found above').id)
      .execute();
    return { replayed: false, ...result };
  });

  reply.status(outcome.status);
  if (outcome.replayed) reply.header('Idempotent-Replayed', 'true');
  return outcome.body;
}

/**
 * A merchant's idempotent write answered `{success: true, data}` with `options.status`: `write` runs in the key's
 * transaction with the caller's scope.
 */
export function idempotentWrite<T>(
  deps: { db: Db; clock: Clock },
  request: FastifyRequest,
  reply: FastifyReply,
  options: IdempotencyOptions & { status: number },
  write: (trx: Trx, scope: MerchantScope) => Promise<T>,
): Promise<{ success: true; data: T }> {
  const scope = merchantScope(request);
  return idempotent(deps, request, reply, options, async (trx) => ({
    status: options.status,
    body: ok(await write(trx, scope)),
  }));
}

export type KeyIdentity = ReturnType<typeof requestIdentity>['identity'];

/**
 * The request's idempotency identity (merchant, mode, method, path, key) and body fingerprint, or undefined when it
 * carries no key; a missing required key or a malformed one is 400. `idempotent()` and the batched payment create
 * (which claims many keys in one statement) both start here.
 */
export function idempotencyRequest(
  request: FastifyRequest,
  options: IdempotencyOptions,
): { identity: KeyIdentity; fingerprint: string } | undefined {
  const raw_key = request.headers['idempotency-key'];
  const key = Array.isArray(raw_key) ? raw_key[0] : raw_key;
  if (key === undefined) {
    if (options.required) throw idempotencyKeyRequired();
    return undefined;
  }
  if (!(options.required ? UUID : ANY_KEY).test(key)) {
    throw idempotencyKeyMalformed(options.required === true);
  }
  return requestIdentity(request, key);
}

function findKeyRow(executor: Db | Trx, identity: KeyIdentity) {
  return executor
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('merchant_id', '=', identity.merchant_id)
    .where('is_sandbox', '=', identity.is_sandbox)
    .where('method', '=', identity.method)
    .where('path', '=', identity.path)
    .where('key', '=', identity.key)
    .executeTakeFirst();
}

function requestIdentity(request: FastifyRequest, key: string) {
  const scope = merchantScope(request);
  const identity = {
    merchant_id: scope.merchant_id,
    is_sandbox: scope.is_sandbox,
    method: request.method,
    path: request.url.split('?')[0] ?? request.url,
    key,
  };
  return { identity, fingerprint: sha256Hex(canonicalJson(request.body ?? null)) };
}

/**
 * The idempotency outcome decided before any side effect outside the database (a provider call): the stored response
 * when the key was used with this body (replay), 409 IDEMPOTENCY_KEY_CONFLICT when it was used with another body,
 * undefined when the request is new (then `idempotent()` runs it; a concurrent first use is still settled there).
 */
export async function storedIdempotentResponse(
  deps: { db: Db; clock: Clock },
  request: FastifyRequest,
  key: string,
): Promise<IdempotentResult<unknown> | undefined> {
  const { identity, fingerprint } = requestIdentity(request, key);
  const existing = await findKeyRow(deps.db, identity);
  if (
    !existing ||
    existing.response_status === null ||
    deps.clock.now().getTime() - existing.created_at.getTime() > IDEMPOTENCY_KEY_TTL_MS
  )
    return undefined;
  if (existing.fingerprint !== fingerprint) throw idempotencyKeyConflict();
  return { status: existing.response_status, body: existing.response_body };
}

/** Deletes keys past their 7 days; run by the worker. */
export async function purgeExpiredIdempotencyKeys(db: Db, clock: Clock): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', new Date(clock.now().getTime() - IDEMPOTENCY_KEY_TTL_MS))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * The idempotency_keys rows that claim keys with their responses stored at once: the batched payment create knows
 * each response before it writes anything, and its one call (mpay_create_batch) inserts these rows, refusing the
 * whole batch when a key exists already (or comes twice); those requests then run alone through idempotent().
 */
export function keyClaimRows(
  claims: readonly { identity: KeyIdentity; fingerprint: string; status: number; body: unknown }[],
  now: Date,
) {
  return claims.map((claim) => ({
    ...claim.identity,
    fingerprint: claim.fingerprint,
    created_at: now,
    response_status: claim.status,
    response_body: claim.body,
  }));
}
