import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.ts';
import type { Authenticator, CarriedEpoch, MerchantScope, Principal } from './principal.ts';
import { MemoryAuthCounters, type AuthCounters } from './auth-counters.ts';
import type { RateLimiter } from './rate-limit.ts';
import {
  adminActorRequired,
  adminRoleRequired,
  liveKeysOnly,
  merchantKeyOnSellerRoute,
  missingSellerKey,
  sellerKeyOnMerchantRoute,
  missingAdminToken,
  missingApiKey,
  missingInternalToken,
  missingKeyOrMerchantCredential,
  missingMerchantCredential,
  rateLimited,
  roleMayNotMoveMoney,
  sandboxKeysOnly,
  tooManyFailedAuthentications,
} from './http-errors.ts';

const SESSION_COOKIE = 'mpay_session';

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/** The dashboard session cookie's value, or undefined. */
export function sessionCookie(request: FastifyRequest): string | undefined {
  const cookie = request.headers.cookie;
  if (!cookie) return undefined;
  for (const part of cookie.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name !== SESSION_COOKIE) continue;
    // A malformed value (bad percent-encoding) is simply not a session: 401, never a thrown URIError.
    try {
      return decodeURIComponent(value.join('='));
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A compact JWT: three base64url parts (a secret API key has none of its dots). */
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/;

async function keyPrincipal(
  request: FastifyRequest,
  config: FastifyContextConfig,
  authenticator: Authenticator,
  carried: CarriedEpoch | undefined,
): Promise<Principal> {
  const raw = headerValue(request, 'x-api-key') ?? bearer(request);
  const principal = raw ? await authenticator.byApiKey(raw, carried) : null;
  // A seller's own key on a merchant route: the wrong kind of credential, not a missing one.
  if (!principal && raw?.startsWith('sel_') && (await authenticator.bySellerKey(raw))) throw sellerKeyOnMerchantRoute();
  if (!principal) throw missingApiKey(config.auth === 'key' && raw !== undefined && JWT_SHAPE.test(raw));
  const mode = config.mode ?? 'any';
  if (mode === 'sandbox_only' && !principal.is_sandbox) {
    throw sandboxKeysOnly();
  }
  if (mode === 'live_only' && principal.is_sandbox) {
    throw liveKeysOnly();
  }
  return principal;
}

/** A merchant JWT (Bearer) or a dashboard session (cookie); a role that may not move money only reads. */
async function merchantPrincipal(
  request: FastifyRequest,
  authenticator: Authenticator,
  carried: CarriedEpoch | undefined,
): Promise<Principal> {
  const token = bearer(request);
  const session = token ? undefined : sessionCookie(request);
  const resolved = token
    ? await authenticator.byJwt(token, carried)
    : session
      ? await authenticator.bySession(session, carried)
      : null;
  if (!resolved) throw missingMerchantCredential();
  if (!resolved.may_move_money && request.method !== 'GET' && request.method !== 'HEAD') {
    throw roleMayNotMoveMoney();
  }
  return resolved;
}

async function authenticate(
  request: FastifyRequest,
  config: FastifyContextConfig,
  authenticator: Authenticator,
  carried: CarriedEpoch | undefined,
): Promise<Principal> {
  const auth = config.auth ?? 'public';
  switch (auth) {
    case 'public':
      return { kind: 'public' };
    case 'key':
      return keyPrincipal(request, config, authenticator, carried);
    case 'merchant':
      return merchantPrincipal(request, authenticator, carried);
    case 'key_or_merchant': {
      const token = bearer(request);
      const jwt = token !== undefined && JWT_SHAPE.test(token);
      if (headerValue(request, 'x-api-key') !== undefined || (token !== undefined && !jwt))
        return keyPrincipal(request, config, authenticator, carried);
      if (jwt || sessionCookie(request) !== undefined) return merchantPrincipal(request, authenticator, carried);
      throw missingKeyOrMerchantCredential();
    }
    case 'seller': {
      const raw = headerValue(request, 'x-api-key') ?? bearer(request);
      const principal = raw ? await authenticator.bySellerKey(raw) : null;
      if (principal) return principal;
      if (raw?.startsWith('svc_') && (await authenticator.byApiKey(raw))) throw merchantKeyOnSellerRoute();
      throw missingSellerKey();
    }
    case 'admin': {
      const token = bearer(request);
      if (!token || !authenticator.isAdminToken(token)) throw missingAdminToken();
      const actor_role = headerValue(request, 'x-actor-role') ?? '';
      const actor_user_id = headerValue(request, 'x-actor-user-id') ?? '';
      if (actor_role !== 'super_admin') throw adminRoleRequired();
      if (!actor_user_id) throw adminActorRequired();
      return { kind: 'admin', actor_user_id, actor_role };
    }
    case 'internal': {
      const token = bearer(request);
      if (!token || !authenticator.isInternalToken(token)) throw missingInternalToken();
      return { kind: 'internal' };
    }
  }
}

/** Authenticates every request by its route's `config.auth`, then charges the caller's rate-limit bucket. */
export function installAuth(
  app: FastifyInstance,
  authenticator: Authenticator,
  limiter: RateLimiter,
  failed_auth_per_second = 5,
  counters: AuthCounters = new MemoryAuthCounters(),
): void {
  // Failed authentication per client address, one budget for every api process (the rate limits' store): each 401
  // takes a token. Once an address's budget is spent, its requests are 429 before any credential is checked, so a
  // guess that happens to be right is not revealed either: this process refuses the address (without asking the store)
  // until the bucket holds a token again, from the first failure it sees after the budget was spent in any process.
  const blocked_until = new Map<string, number>();
  const now_ms = () => performance.timeOrigin + performance.now();
  const refuseFailedAuth = (reply: FastifyReply, retry_after_seconds: number) => {
    reply.header('Retry-After', String(retry_after_seconds));
    return tooManyFailedAuthentications(retry_after_seconds);
  };
  /** Sets the request's principal; a 401 takes a token from the address's failed-authentication budget. */
  const authenticateCharged = async (
    request: FastifyRequest,
    reply: FastifyReply,
    config: FastifyContextConfig,
    carried: CarriedEpoch | undefined,
  ) => {
    try {
      request.principal = await authenticate(request, config, authenticator, carried);
      request.credential_epoch = carried?.epoch;
    } catch (error) {
      // nothing is answered or logged under a credential that failed (a cached one that failed its check again)
      request.principal = { kind: 'public' };
      request.credential_epoch = undefined;
      if (error instanceof AppError && error.code === 'UNAUTHORIZED') {
        const failed_key = `failed-auth:${request.ip}`;
        const charged = await counters.take(failed_key, failed_auth_per_second);
        // spent: refused here until the bucket holds a token again
        if (!charged.allowed || charged.remaining < 1) {
          if (blocked_until.size >= 100_000) blocked_until.clear();
          const wait_seconds = charged.allowed
            ? Math.max(1, Math.ceil(1 / failed_auth_per_second))
            : charged.retry_after_seconds;
          blocked_until.set(failed_key, now_ms() + wait_seconds * 1000);
        }
        if (!charged.allowed) throw refuseFailedAuth(reply, charged.retry_after_seconds);
      }
      throw error;
    }
  };
  app.decorateRequest('principal', null as never);
  app.decorateRequest('credential_epoch', undefined);
  app.decorateRequest('reauthenticate', function (this: FastifyRequest, reply: FastifyReply) {
    return authenticateCharged(this, reply, this.routeOptions.config, undefined);
  });
  app.addHook('onRequest', async (request, reply) => {
    // Read once: Fastify builds a new routeOptions object on every access.
    const { config, url } = request.routeOptions;
    const auth = config.auth ?? 'public';
    if (auth !== 'public' && blocked_until.size > 0) {
      const failed_key = `failed-auth:${request.ip}`;
      const until = blocked_until.get(failed_key);
      if (until !== undefined) {
        const wait_ms = until - now_ms();
        if (wait_ms > 0) throw refuseFailedAuth(reply, Math.max(1, Math.ceil(wait_ms / 1000)));
        blocked_until.delete(failed_key);
      }
    }
    await authenticateCharged(request, reply, config, config.credential_epoch === 'carried' ? {} : undefined);
    if (config.rate_limit === false || !url) return;
    const bucket = rateLimitBucket(request);
    const outcome = await limiter.take(bucket.key, bucket.per_second);
    reply.header('RateLimit-Policy', `"${bucket.policy}";q=${bucket.per_second};w=1`);
    reply.header('RateLimit', `"${bucket.policy}";r=${outcome.remaining};t=${outcome.reset_seconds}`);
    if (!outcome.allowed) {
      reply.header('Retry-After', String(outcome.retry_after_seconds));
      throw rateLimited(bucket.per_second, outcome.retry_after_seconds);
    }
  });

  function rateLimitBucket(request: FastifyRequest): { key: string; per_second: number; policy: string } {
    const principal = request.principal;
    const { live, sandbox } = limiter.limits;
    switch (principal.kind) {
      case 'key':
        return principal.is_sandbox
          ? { key: `key:${principal.key_id}`, per_second: sandbox, policy: 'sandbox' }
          : { key: `key:${principal.key_id}`, per_second: live, policy: 'live' };
      case 'merchant':
        return { key: `merchant:${principal.merchant_id}:${principal.user_id}`, per_second: live, policy: 'live' };
      case 'seller':
        return { key: `seller:${principal.seller_id}`, per_second: live, policy: 'live' };
      case 'admin':
      case 'internal':
        return { key: principal.kind, per_second: live * 10, policy: principal.kind };
      case 'public':
        return { key: `ip:${request.ip}`, per_second: live, policy: 'public' };
    }
  }
}

/** A statement of a `credential_epoch: 'carried'` route saw an epoch other than the one its credential was cached under. */
export class CredentialEpochMoved extends Error {
  constructor() {
    super('the credential epoch moved since the credential was cached');
  }
}

/**
 * Runs a `credential_epoch: 'carried'` route's work: `run` gets the epoch its statement must see (undefined: none to
 * check) and throws CredentialEpochMoved when its statement saw another. The request then authenticates again against
 * a fresh epoch read (a revoked credential is refused there) and `run` runs once more with nothing left to check, so
 * `run` reads the principal (merchantScope) itself on each run. What a run wrote is its statement's own affair: a
 * statement that checks the epoch refuses itself before keeping anything.
 */
export async function withCarriedEpoch<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  run: (epoch: number | undefined) => Promise<T>,
): Promise<T> {
  const epoch = request.credential_epoch;
  if (epoch === undefined) return run(undefined);
  try {
    return await run(epoch);
  } catch (error) {
    if (!(error instanceof CredentialEpochMoved)) throw error;
  }
  await request.reauthenticate(reply);
  return run(undefined);
}

/** The merchant and mode whose rows a request may see. */
export function merchantScope(request: FastifyRequest): MerchantScope {
  const principal = request.principal;
  if (principal.kind === 'key' || principal.kind === 'merchant') {
    return { merchant_id: principal.merchant_id, is_sandbox: principal.is_sandbox };
  }
  throw new Error(`route needs a merchant principal, got ${principal.kind}`);
}

/** The seller behind a seller route (its own key). */
export function sellerOf(request: FastifyRequest): string {
  const principal = request.principal;
  if (principal.kind !== 'seller') throw new Error(`route needs a seller principal, got ${principal.kind}`);
  return principal.seller_id;
}

export function adminActor(request: FastifyRequest): { actor_user_id: string; actor_role: string } {
  const principal = request.principal;
  if (principal.kind !== 'admin') throw new Error('route needs an admin principal');
  return { actor_user_id: principal.actor_user_id, actor_role: principal.actor_role };
}
