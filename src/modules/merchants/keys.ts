import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.ts';
import type { KeyKind } from '../../http/principal.ts';
import { iso } from '../../http/schemas.ts';
import type { Clock } from '../../lib/clock.ts';
import { assert } from '../../lib/assert.ts';
import { notFound } from '../../lib/errors.ts';
import type { CredentialCache } from './credential-cache.ts';
import { generateApiKey } from './credentials.ts';
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

function present(
  row: { id: string; kind: KeyKind; key_hint: string; created_at: Date; revoked_at: Date | null },
  now: Date,
): ApiKeyView {
  const status = row.revoked_at === null ? 'active' : row.revoked_at > now ? 'expiring' : 'revoked';
  return {
    id: row.id,
    kind: row.kind,
    hint: row.key_hint,
    created_at: iso(row.created_at),
    expires_at: iso(row.revoked_at),
    status,
  };
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

/** Which keys a roll replaces: one key by id (the dashboard), or every active key of a kind (the operator). */
export type KeyRollTarget = { key_id: string } | { kind: KeyKind };

/**
 * The one key roll: a new key of the target's kind (its raw value exists only in the result) and the replaced keys keep
 * working for `grace_seconds` (0 ends them at once), in one transaction; a roll by kind replaces every key of the kind
 * that still works, one in an earlier roll's grace too (a grace is only ever shortened). A key id must name an active key of the
 * merchant (404 unknown, 403 already rolled); rolling one key twice at once, one loses. This process forgets the
 * merchant's cached keys at once; other processes within the cache's TTL.
 */
export async function rollKeys(
  deps: { db: Db; clock: Clock; key_cache?: CredentialCache | undefined },
  merchant_id: string,
  target: KeyRollTarget,
  grace_seconds: number,
): Promise<{ kind: KeyKind; key: ApiKeyView; raw_key: string; previous: ApiKeyView[] }> {
  if (!Number.isInteger(grace_seconds) || grace_seconds < 0 || grace_seconds > MAX_KEY_ROLL_GRACE_SECONDS) {
    throw graceOutOfRange(MAX_KEY_ROLL_GRACE_SECONDS);
  }
  const now = deps.clock.now();
  const revoked_at = new Date(now.getTime() + grace_seconds * 1000);
  const rolled = await deps.db.transaction().execute(async (trx) => {
    let select = trx.selectFrom('api_keys').selectAll().where('merchant_id', '=', merchant_id);
    select =
      'key_id' in target
        ? select.where('id', '=', target.key_id)
        : // every key of the kind that still works, those in a roll's grace included: a roll never lengthens a grace
          select
            .where('kind', '=', target.kind)
            .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', revoked_at)]));
    const old = await select.forUpdate().execute();
    let kind: KeyKind;
    if ('key_id' in target) {
      const [key] = old;
      if (!key) throw notFound('API key');
      if (key.revoked_at !== null) throw keyAlreadyRolled();
      kind = key.kind;
    } else {
      kind = target.kind;
    }
    if (old.length > 0)
      await trx
        .updateTable('api_keys')
        .set({ revoked_at })
        .where(
          'id',
          'in',
          old.map((row) => row.id),
        )
        .execute();
    const fresh = generateApiKey(kind);
    const id = randomUUID();
    await trx
      .insertInto('api_keys')
      .values({ id, merchant_id, kind, key_hash: fresh.hash, key_hint: fresh.hint, created_at: now })
      .execute();
    return {
      kind,
      key: present({ id, kind, key_hint: fresh.hint, created_at: now, revoked_at: null }, now),
      raw_key: fresh.raw,
      previous: old.map((row) => present({ ...row, revoked_at }, now)),
    };
  });
  deps.key_cache?.forgetMerchant(merchant_id);
  return rolled;
}

/** The dashboard's roll: one key by id, the old one valid for `grace_seconds` (a day by default). */
export async function rollApiKey(
  deps: { db: Db; clock: Clock; key_cache?: CredentialCache | undefined },
  merchant_id: string,
  key_id: string,
  grace_seconds = DEFAULT_KEY_ROLL_GRACE_SECONDS,
): Promise<{ key: ApiKeyView; raw_key: string; previous: ApiKeyView }> {
  const { key, raw_key, previous } = await rollKeys(deps, merchant_id, { key_id }, grace_seconds);
  const [rolled] = previous;
  assert(rolled && previous.length === 1, 'a roll by key id replaces exactly that key');
  return { key, raw_key, previous: rolled };
}
