import { jwtVerify, SignJWT } from 'jose';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { constantTimeEqual, randomBase62, sha256Hex } from '../../lib/crypto.ts';
import type { Authenticator, KeyKind } from '../../http/principal.ts';

export const KEY_PREFIX: Record<KeyKind, string> = { live: 'svc_live_', test: 'svc_test_', sandbox: 'svc_sandbox_' };
const KEY_PATTERN = /^svc_(live|test|sandbox)_[0-9A-Za-z]{32,128}$/;

export function generateApiKey(kind: KeyKind): { raw: string; hash: string; hint: string } {
  const raw = `${KEY_PREFIX[kind]}${randomBase62(40)}`;
  return { raw, hash: sha256Hex(raw), hint: `${raw.slice(0, KEY_PREFIX[kind].length + 4)}…${raw.slice(-4)}` };
}

export function generateWebhookSecret(): string {
  return `whsec_${Buffer.from(randomBase62(32)).toString('base64')}`;
}

export interface ServiceSecrets {
  jwt_secret: string;
  admin_token_sha256: string;
  internal_token_sha256: string;
}

const JWT_ISSUER = 'mpay';

export async function issueMerchantJwt(
  secrets: Pick<ServiceSecrets, 'jwt_secret'>,
  clock: Clock,
  claims: { merchant_id: string; user_id: string; expires_in_seconds: number },
): Promise<string> {
  const issued_at_s = Math.floor(clock.now().getTime() / 1000);
  return new SignJWT({ merchant_id: claims.merchant_id })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.user_id)
    .setIssuer(JWT_ISSUER)
    .setIssuedAt(issued_at_s)
    .setExpirationTime(issued_at_s + claims.expires_in_seconds)
    .sign(new TextEncoder().encode(secrets.jwt_secret));
}

/** Verifies every credential kind of DESIGN.md: API keys by SHA-256 lookup, HS256 JWTs, sessions, service tokens. */
export function createAuthenticator(deps: { db: Db; clock: Clock; secrets: ServiceSecrets }): Authenticator {
  const jwt_key = new TextEncoder().encode(deps.secrets.jwt_secret);

  async function merchantExists(merchant_id: string): Promise<boolean> {
    const row = await deps.db.selectFrom('merchants').select('id').where('id', '=', merchant_id).executeTakeFirst();
    return row !== undefined;
  }

  return {
    async byApiKey(raw_key) {
      if (!KEY_PATTERN.test(raw_key)) return null;
      const row = await deps.db
        .selectFrom('api_keys')
        .select(['id', 'merchant_id', 'kind'])
        .where('key_hash', '=', sha256Hex(raw_key))
        // A rolled key stays valid until its grace period ends (revoked_at in the future).
        .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', deps.clock.now())]))
        .executeTakeFirst();
      if (!row) return null;
      return { kind: 'key', merchant_id: row.merchant_id, key_id: row.id, key_kind: row.kind, is_sandbox: row.kind !== 'live' };
    },

    async byJwt(token) {
      try {
        const { payload } = await jwtVerify(token, jwt_key, {
          algorithms: ['HS256'],
          issuer: JWT_ISSUER,
          currentDate: deps.clock.now(),
        });
        const merchant_id = payload['merchant_id'];
        if (typeof merchant_id !== 'string' || typeof payload.sub !== 'string') return null;
        if (!(await merchantExists(merchant_id))) return null;
        return { kind: 'merchant', merchant_id, user_id: payload.sub, via: 'jwt', is_sandbox: false };
      } catch {
        return null;
      }
    },

    async bySession(token) {
      const row = await deps.db
        .selectFrom('merchant_sessions')
        .select(['merchant_id', 'user_id', 'expires_at', 'idle_expires_at', 'revoked_at', 'is_sandbox'])
        .where('token_hash', '=', sha256Hex(token))
        .executeTakeFirst();
      const now_ms = deps.clock.now().getTime();
      if (!row || row.expires_at.getTime() <= now_ms) return null;
      // Dashboard sign-ins (issue 14) also end on sign-out and after the idle timeout, and carry the view's mode.
      if (row.revoked_at !== null || (row.idle_expires_at !== null && row.idle_expires_at.getTime() <= now_ms)) return null;
      return { kind: 'merchant', merchant_id: row.merchant_id, user_id: row.user_id, via: 'session', is_sandbox: row.is_sandbox };
    },

    isAdminToken(token) {
      return constantTimeEqual(sha256Hex(token), deps.secrets.admin_token_sha256);
    },

    isInternalToken(token) {
      return constantTimeEqual(sha256Hex(token), deps.secrets.internal_token_sha256);
    },
  };
}
