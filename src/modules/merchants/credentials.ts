import { jwtVerify, SignJWT } from 'jose';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { constantTimeEqual, randomBase62, sha256Hex } from '../../lib/crypto.ts';
import { MONEY_ROLES, type Authenticator, type KeyKind, type Principal } from '../../http/principal.ts';
import { present } from '../../lib/assert.ts';
import { sessionByToken, sessionInForce } from './sessions.ts';

export const KEY_PREFIX: Record<KeyKind, string> = { live: 'svc_live_', test: 'svc_test_', sandbox: 'svc_sandbox_' };
const KEY_PATTERN = /^svc_(live|test|sandbox)_[0-9A-Za-z]{32,128}$/;

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

/** How long a verified API key is trusted without asking the database: the bound on a revoked key's reach in another process. */
export const API_KEY_CACHE_TTL_MS = 5_000;
/** Most keys kept; beyond it the oldest entry goes first. */
export const API_KEY_CACHE_MAX_ENTRIES = 10_000;

/**
 * Verified API keys by their SHA-256, for a few seconds, so a request costs no key look-up. Only keys that
 * verified are kept (an unknown key always reaches the database). A roll or revoke in this process forgets the
 * merchant's entries at once; another process's entries expire within API_KEY_CACHE_TTL_MS.
 */
export class ApiKeyCache {
  readonly #entries = new Map<string, { principal: KeyPrincipal; expires_at_ms: number }>();
  readonly #options: { ttl_ms: number; max_entries: number };

  constructor(
    options: { ttl_ms: number; max_entries: number } = {
      ttl_ms: API_KEY_CACHE_TTL_MS,
      max_entries: API_KEY_CACHE_MAX_ENTRIES,
    },
  ) {
    this.#options = options;
  }

  get(key_hash: string, now_ms: number): KeyPrincipal | undefined {
    const entry = this.#entries.get(key_hash);
    if (!entry) return undefined;
    if (entry.expires_at_ms <= now_ms) {
      this.#entries.delete(key_hash);
      return undefined;
    }
    return entry.principal;
  }

  set(key_hash: string, principal: KeyPrincipal, now_ms: number): void {
    if (this.#options.ttl_ms <= 0) return;
    this.#entries.delete(key_hash);
    if (this.#entries.size >= this.#options.max_entries)
      this.#entries.delete(present(this.#entries.keys().next().value, 'a full cache has a first entry'));
    this.#entries.set(key_hash, { principal, expires_at_ms: now_ms + this.#options.ttl_ms });
  }

  /** Forgets every cached key of a merchant (its keys were rolled or revoked). */
  forgetMerchant(merchant_id: string): void {
    for (const [hash, entry] of this.#entries)
      if (entry.principal.merchant_id === merchant_id) this.#entries.delete(hash);
  }

  get size(): number {
    return this.#entries.size;
  }
}

/** Verifies every credential kind (docs/api.md): API keys by SHA-256 lookup (cached briefly), HS256 JWTs, sessions, service tokens. */
export function createAuthenticator(deps: {
  db: Db;
  clock: Clock;
  secrets: ServiceSecrets;
  key_cache?: ApiKeyCache;
  jwt_max_lifetime_seconds: number;
}): Authenticator {
  const jwt_key = new TextEncoder().encode(deps.secrets.jwt_secret);

  /** The merchant's revocation instant, or undefined when the merchant does not exist. */
  async function tokensNotBefore(merchant_id: string): Promise<{ not_before: Date | null } | undefined> {
    const row = await deps.db
      .selectFrom('merchants')
      .select('tokens_not_before')
      .where('id', '=', merchant_id)
      .executeTakeFirst();
    return row ? { not_before: row.tokens_not_before } : undefined;
  }

  /** A token traded for an API key lives only while that key works and only in that key's mode. */
  async function keyStillValid(key_id: unknown, merchant_id: string, mode: CredentialMode): Promise<boolean> {
    if (typeof key_id !== 'string' || !/^[0-9a-f-]{36}$/i.test(key_id)) return false;
    const key = await deps.db
      .selectFrom('api_keys')
      .select('kind')
      .where('id', '=', key_id)
      .where('merchant_id', '=', merchant_id)
      .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', deps.clock.now())]))
      .executeTakeFirst();
    return key !== undefined && keyMode(key.kind) === mode;
  }

  return {
    async byApiKey(raw_key) {
      if (!KEY_PATTERN.test(raw_key)) return null;
      const key_hash = sha256Hex(raw_key);
      const now_ms = deps.clock.now().getTime();
      const cached = deps.key_cache?.get(key_hash, now_ms);
      if (cached) return cached;
      const row = await deps.db
        .selectFrom('api_keys')
        .select(['id', 'merchant_id', 'kind'])
        .where('key_hash', '=', key_hash)
        // A rolled key stays valid until its grace period ends (revoked_at in the future).
        .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', deps.clock.now())]))
        .executeTakeFirst();
      if (!row) return null;
      const principal: KeyPrincipal = {
        kind: 'key',
        merchant_id: row.merchant_id,
        key_id: row.id,
        key_kind: row.kind,
        is_sandbox: row.kind !== 'live',
      };
      deps.key_cache?.set(key_hash, principal, now_ms);
      return principal;
    },

    async byJwt(token) {
      try {
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
        const merchant = await tokensNotBefore(merchant_id);
        if (!merchant) return null;
        if (merchant.not_before && payload.iat * 1000 < merchant.not_before.getTime()) return null;
        if (payload['key_id'] !== undefined && !(await keyStillValid(payload['key_id'], merchant_id, mode)))
          return null;
        return {
          kind: 'merchant',
          merchant_id,
          user_id: payload.sub,
          via: 'jwt',
          is_sandbox: mode === 'sandbox',
          may_move_money: true,
        };
      } catch {
        return null;
      }
    },

    async bySession(token) {
      // Sessions carry the view's mode; a dashboard sign-in's also ends on sign-out and after the idle timeout.
      const row = await sessionByToken(deps.db, token)
        .leftJoin('merchant_users as u', 'u.id', 's.merchant_user_id')
        .select(['s.user_id', 'u.role'])
        .executeTakeFirst();
      if (!row || !sessionInForce(row, deps.clock.now())) return null;
      // A dashboard user's session reaches the /v1 merchant routes with that user's role: only money roles may write.
      const may_move_money = row.role === null || MONEY_ROLES.includes(row.role);
      return {
        kind: 'merchant',
        merchant_id: row.merchant_id,
        user_id: row.user_id,
        via: 'session',
        is_sandbox: row.is_sandbox,
        may_move_money,
      };
    },

    isAdminToken(token) {
      return constantTimeEqual(sha256Hex(token), deps.secrets.admin_token_sha256);
    },

    isInternalToken(token) {
      return constantTimeEqual(sha256Hex(token), deps.secrets.internal_token_sha256);
    },
  };
}
