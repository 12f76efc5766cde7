import { jwtVerify, SignJWT } from 'jose';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { constantTimeEqual, randomBase62, sha256Hex } from '../../lib/crypto.ts';
import {
  MONEY_ROLES,
  type Authenticator,
  type CarriedEpoch,
  type KeyKind,
  type Principal,
} from '../../http/principal.ts';
import { BatchedRead } from '../../db/batched-read.ts';
import type { CachedPrincipal, CredentialCache } from './credential-cache.ts';
import { sessionsByTokenHash, sessionInForce, type SessionForAuth } from './sessions.ts';

export const KEY_PREFIX: Record<KeyKind, string> = { live: 'svc_live_', test: 'svc_test_', sandbox: 'svc_sandbox_' };
const KEY_PATTERN = /^svc_(live|test|sandbox)_[0-9A-Za-z]{32,128}$/;
export const SELLER_KEY_PREFIX = 'sel_live_';
const SELLER_KEY_PATTERN = /^sel_live_[0-9A-Za-z]{32,128}$/;

/** A new seller key (DESIGN 3b): `sel_live_` + 40 base62 characters, kept as its SHA-256 with a hint. */
export function generateSellerKey(): { raw: string; hash: string; hint: string } {
  const raw = `${SELLER_KEY_PREFIX}${randomBase62(40)}`;
  return { raw, hash: sha256Hex(raw), hint: `${raw.slice(0, SELLER_KEY_PREFIX.length + 4)}…${raw.slice(-4)}` };
}

/** Whether a presented credential has the shape of a seller key (so a merchant route can say it is the wrong kind). */
export const looksLikeSellerKey = (raw: string): boolean => raw.startsWith(SELLER_KEY_PREFIX);

export function generateApiKey(kind: KeyKind): { raw: string; hash: string; hint: string } {
  const raw = `${KEY_PREFIX[kind]}${randomBase62(40)}`;
  return { raw, hash: sha256Hex(raw), hint: `${raw.slice(0, KEY_PREFIX[kind].length + 4)}…${raw.slice(-4)}` };
}

export interface ServiceSecrets {
  jwt_secret: string;
  admin_token_sha256: string;
  internal_token_sha256: string;
}

const JWT_ISSUER = 'mpay';

/** Which rows a merchant JWT or dashboard session reaches: live (the default) or sandbox. */
export type CredentialMode = 'live' | 'sandbox';

/** The rows an API key reaches: test and sandbox keys both reach the sandbox rows. */
export const keyMode = (kind: KeyKind): CredentialMode => (kind === 'live' ? 'live' : 'sandbox');

export async function issueMerchantJwt(
  secrets: Pick<ServiceSecrets, 'jwt_secret'>,
  clock: Clock,
  claims: {
    merchant_id: string;
    user_id: string;
    expires_in_seconds: number;
    mode?: CredentialMode | undefined;
    not_before?: Date | null | undefined;
    /** The API key the token was traded for: the token ends when that key is revoked. */
    key_id?: string | undefined;
  },
): Promise<string> {
  // `iat` has whole seconds; a token minted in the second of a revocation must still count as after it.
  const issued_at_s = Math.max(
    Math.floor(clock.now().getTime() / 1000),
    claims.not_before ? Math.ceil(claims.not_before.getTime() / 1000) : 0,
  );
  const key_claim = claims.key_id === undefined ? {} : { key_id: claims.key_id };
  return new SignJWT({ merchant_id: claims.merchant_id, mode: claims.mode ?? 'live', ...key_claim })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.user_id)
    .setIssuer(JWT_ISSUER)
    .setIssuedAt(issued_at_s)
    .setExpirationTime(issued_at_s + claims.expires_in_seconds)
    .sign(new TextEncoder().encode(secrets.jwt_secret));
}

type KeyPrincipal = Extract<Principal, { kind: 'key' }>;
type MerchantPrincipal = Extract<Principal, { kind: 'merchant' }>;
type SellerPrincipal = Extract<Principal, { kind: 'seller' }>;

/** A key's row as the authenticator reads it (by hash, or by id for a token traded for a key). */
interface KeyRow {
  id: string;
  merchant_id: string;
  kind: KeyKind;
  key_hash: string;
  revoked_at: Date | null;
}

/** A key works until its revocation instant (a rolled key keeps working through its grace period). */
const keyWorks = (row: KeyRow, now: Date) => row.revoked_at === null || row.revoked_at > now;

/**
 * Verifies every credential kind (docs/api.md): API keys by SHA-256 lookup, HS256 JWTs, sessions, service tokens.
 * Verified credentials are kept in `cache` (credential-cache.ts, forgotten in every process when they change), and the
 * database reads behind them are batched by key: concurrent look-ups of keys, sessions and merchants each share one
 * statement (db/batched-read.ts).
 */
export function createAuthenticator(deps: {
  db: Db;
  clock: Clock;
  secrets: ServiceSecrets;
  cache?: CredentialCache;
  jwt_max_lifetime_seconds: number;
}): Authenticator {
  const jwt_key = new TextEncoder().encode(deps.secrets.jwt_secret);
  const keys_by_hash = new BatchedRead<string, KeyRow>(
    (hashes) =>
      deps.db
        .selectFrom('api_keys')
        .select(['id', 'merchant_id', 'kind', 'key_hash', 'revoked_at'])
        .where('key_hash', 'in', hashes)
        .execute(),
    (row) => row.key_hash,
  );
  const keys_by_id = new BatchedRead<string, KeyRow>(
    (ids) =>
      deps.db
        .selectFrom('api_keys')
        .select(['id', 'merchant_id', 'kind', 'key_hash', 'revoked_at'])
        .where('id', 'in', ids)
        .execute(),
    (row) => row.id,
  );
  const merchants_by_id = new BatchedRead<string, { id: string; tokens_not_before: Date | null }>(
    (ids) => deps.db.selectFrom('merchants').select(['id', 'tokens_not_before']).where('id', 'in', ids).execute(),
    (row) => row.id,
  );
  const sessions_by_hash = new BatchedRead<string, SessionForAuth>(
    (hashes) => sessionsByTokenHash(deps.db, hashes),
    (row) => row.token_hash,
  );
  const sellers_by_hash = new BatchedRead<string, { id: string; key_hash: string }>(
    (hashes) =>
      deps.db
        .selectFrom('sellers')
        .select(['id', 'key_hash'])
        .where('key_hash', 'in', hashes)
        .where('is_sandbox', '=', false)
        .$narrowType<{ key_hash: string }>()
        .execute(),
    (row) => row.key_hash,
  );
  const cache = deps.cache;

  /** A token traded for an API key lives only while that key works and only in that key's mode. */
  async function keyStillValid(key_id: unknown, merchant_id: string, mode: CredentialMode): Promise<KeyRow | null> {
    if (typeof key_id !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(key_id))
      return null;
    const key = await keys_by_id.read(key_id.toLowerCase());
    return key && key.merchant_id === merchant_id && keyWorks(key, deps.clock.now()) && keyMode(key.kind) === mode
      ? key
      : null;
  }

  /**
   * The credential under `cache_key`: from the cache when it was read under the epoch the request carries (no epoch
   * read) or under the epoch read now, else from `verify` (null: not a valid credential), then cached under that epoch
   * until `until_ms`. `carried.epoch` is set to the epoch the answer holds under, for the request's statement to check
   * (for one read from the database, the epoch read before it, so a change after that read is caught).
   */
  async function throughCache<P extends CachedPrincipal>(
    cache_key: string,
    carried: CarriedEpoch | undefined,
    verify: () => Promise<{ principal: P; until_ms: number } | null>,
  ): Promise<P | null> {
    const carried_hit = carried && cache?.peek<P>(cache_key, deps.clock.now().getTime());
    if (carried_hit) {
      carried.epoch = carried_hit.epoch;
      return carried_hit.principal;
    }
    const epoch = await cache?.epoch();
    const cached = epoch === undefined ? undefined : cache?.get<P>(cache_key, epoch, deps.clock.now().getTime());
    if (cached) {
      if (carried) carried.epoch = epoch;
      return cached;
    }
    const found = await verify();
    if (!found) return null;
    if (epoch !== undefined) {
      cache?.set(cache_key, found.principal, epoch, found.until_ms, deps.clock.now().getTime());
      if (carried) carried.epoch = epoch;
    }
    return found.principal;
  }

  return {
    async byApiKey(raw_key, carried) {
      if (!KEY_PATTERN.test(raw_key)) return null;
      const key_hash = sha256Hex(raw_key);
      return throughCache<KeyPrincipal>(`key:${key_hash}`, carried, async () => {
        const row = await keys_by_hash.read(key_hash);
        if (!row || !keyWorks(row, deps.clock.now())) return null;
        const principal: KeyPrincipal = {
          kind: 'key',
          merchant_id: row.merchant_id,
          key_id: row.id,
          key_kind: row.kind,
          is_sandbox: row.kind !== 'live',
        };
        return { principal, until_ms: row.revoked_at?.getTime() ?? Infinity };
      });
    },

    // Seller keys: the same credential path as API keys (SHA-256 lookup, cached under the credential epoch, which a
    // rolled seller key moves), on the seller's own row.
    async bySellerKey(raw_key) {
      if (!SELLER_KEY_PATTERN.test(raw_key)) return null;
      const key_hash = sha256Hex(raw_key);
      return throughCache<SellerPrincipal>(`seller:${key_hash}`, undefined, async () => {
        const row = await sellers_by_hash.read(key_hash);
        return row ? { principal: { kind: 'seller', seller_id: row.id }, until_ms: Infinity } : null;
      });
    },

    async byJwt(token, carried) {
      try {
        return await throughCache<MerchantPrincipal>(`jwt:${sha256Hex(token)}`, carried, async () => {
          const { payload } = await jwtVerify(token, jwt_key, {
            algorithms: ['HS256'],
            issuer: JWT_ISSUER,
            currentDate: deps.clock.now(),
            requiredClaims: ['exp', 'iat', 'sub'],
          });
          const merchant_id = payload['merchant_id'];
          const mode = payload['mode'] ?? 'live';
          if (
            typeof merchant_id !== 'string' ||
            typeof payload.sub !== 'string' ||
            (mode !== 'live' && mode !== 'sandbox')
          )
            return null;
          // Lifetime cap: a token minted (or forged with the key) to live longer than JWT_MAX_LIFETIME_SECONDS is refused.
          if (
            payload.exp === undefined ||
            payload.iat === undefined ||
            payload.exp - payload.iat > deps.jwt_max_lifetime_seconds
          )
            return null;
          const merchant = await merchants_by_id.read(merchant_id.toLowerCase());
          if (!merchant) return null;
          if (merchant.tokens_not_before && payload.iat * 1000 < merchant.tokens_not_before.getTime()) return null;
          let until_ms = payload.exp * 1000;
          if (payload['key_id'] !== undefined) {
            const key = await keyStillValid(payload['key_id'], merchant_id, mode);
            if (!key) return null;
            until_ms = Math.min(until_ms, key.revoked_at?.getTime() ?? Infinity);
          }
          const principal: MerchantPrincipal = {
            kind: 'merchant',
            merchant_id,
            user_id: payload.sub,
            via: 'jwt',
            is_sandbox: mode === 'sandbox',
            may_move_money: true,
          };
          return { principal, until_ms };
        });
      } catch {
        return null;
      }
    },

    async bySession(token, carried) {
      const token_hash = sha256Hex(token);
      return throughCache<MerchantPrincipal>(`session:${token_hash}`, carried, async () => {
        // Sessions carry the view's mode; a dashboard sign-in's also ends on sign-out and after the idle timeout.
        const row = await sessions_by_hash.read(token_hash);
        if (!row || !sessionInForce(row, deps.clock.now())) return null;
        // A dashboard user's session reaches the /v1 merchant routes with that user's role: only money roles may write.
        const may_move_money = row.role === null || MONEY_ROLES.includes(row.role);
        const principal: MerchantPrincipal = {
          kind: 'merchant',
          merchant_id: row.merchant_id,
          user_id: row.user_id,
          via: 'session',
          is_sandbox: row.is_sandbox,
          may_move_money,
        };
        // the session's idle end as read: a use past it asks the database again (another process may have slid it)
        return { principal, until_ms: Math.min(row.expires_at.getTime(), row.idle_expires_at?.getTime() ?? Infinity) };
      });
    },

    isAdminToken(token) {
      return constantTimeEqual(sha256Hex(token), deps.secrets.admin_token_sha256);
    },

    isInternalToken(token) {
      return constantTimeEqual(sha256Hex(token), deps.secrets.internal_token_sha256);
    },
  };
}
