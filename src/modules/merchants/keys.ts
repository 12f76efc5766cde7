import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.ts';
import type { KeyKind } from '../../http/principal.ts';
import { iso } from '../../http/schemas.ts';
import type { Clock } from '../../lib/clock.ts';
import { notFound } from '../../lib/errors.ts';
import { generateApiKey, type ApiKeyCache } from './credentials.ts';
import { graceOutOfRange, keyAlreadyRolled } from './errors.ts';

export const DEFAULT_KEY_ROLL_GRACE_SECONDS = 24 * 3600;
export const MAX_KEY_ROLL_GRACE_SECONDS = 7 * 24 * 3600;

export interface ApiKeyView {
  id: string;
  kind: KeyKind;
  hint: string;
  created_at: string;
  /** Null while the key is valid with no end; a future time during a roll's grace period. */
  expires_at: string | null;
  status: 'active' | 'expiring' | 'revoked';
}

function present(row: { id: string; kind: KeyKind; key_hint: string; created_at: Date; revoked_at: Date | null }, now: Date): ApiKeyView {
  const status = row.revoked_at === null ? 'active' : row.revoked_at > now ? 'expiring' : 'revoked';
  return { id: row.id, kind: row.kind, hint: row.key_hint, created_at: iso(row.created_at), expires_at: iso(row.revoked_at), status };
}

/** A merchant's keys that still work (active, or rolled and inside their grace period), newest first. */
export async function listApiKeys(deps: { db: Db; clock: Clock }, merchant_id: string): Promise<ApiKeyView[]> {
  const now = deps.clock.now();
  const rows = await deps.db
    .selectFrom('api_keys')
    .select(['id', 'kind', 'key_hint', 'created_at', 'revoked_at'])
    .where('merchant_id', '=', merchant_id)
    .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', now)]))
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
  return rows.map((row) => present(row, now));
}

/**
 * Rolls a key: a new key of the same kind (its raw value exists only in the result) and the old one keeps working
 * for `grace_seconds` (0 revokes it at once). Only an active key rolls; rolling it twice at once, one loses with 409.
 */
export async function rollApiKey(
  deps: { db: Db; clock: Clock; key_cache?: ApiKeyCache | undefined },
  merchant_id: string,
  key_id: string,
  grace_seconds = DEFAULT_KEY_ROLL_GRACE_SECONDS,
): Promise<{ key: ApiKeyView; raw_key: string; previous: ApiKeyView }> {
  if (!Number.isInteger(grace_seconds) || grace_seconds < 0 || grace_seconds > MAX_KEY_ROLL_GRACE_SECONDS) {
    throw graceOutOfRange(MAX_KEY_ROLL_GRACE_SECONDS);
  }
  const now = deps.clock.now();
  const rolled = await deps.db.transaction().execute(async (trx) => {
    const old = await trx.selectFrom('api_keys').selectAll().where('id', '=', key_id).where('merchant_id', '=', merchant_id).forUpdate().executeTakeFirst();
    if (!old) throw notFound('API key');
    if (old.revoked_at !== null) throw keyAlreadyRolled();
    const revoked_at = new Date(now.getTime() + grace_seconds * 1000);
    await trx.updateTable('api_keys').set({ revoked_at }).where('id', '=', old.id).execute();
    const fresh = generateApiKey(old.kind);
    const id = randomUUID();
    await trx.insertInto('api_keys').values({ id, merchant_id, kind: old.kind, key_hash: fresh.hash, key_hint: fresh.hint, created_at: now }).execute();
    return {
      key: present({ id, kind: old.kind, key_hint: fresh.hint, created_at: now, revoked_at: null }, now),
      raw_key: fresh.raw,
      previous: present({ ...old, revoked_at }, now),
    };
  });
  // This process re-reads the merchant's keys at once (the old key's grace end included); others within the cache's TTL.
  deps.key_cache?.forgetMerchant(merchant_id);
  return rolled;
}
