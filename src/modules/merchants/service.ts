import { randomUUID } from 'node:crypto';
import type { Db, Executor, Trx } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { randomBase62, sha256Hex } from '../../lib/crypto.ts';
import { notFound } from '../../lib/errors.ts';
import { generateApiKey, issueMerchantJwt, keyMode, type CredentialMode, type ServiceSecrets } from './credentials.ts';
import type { KeyKind } from '../../http/principal.ts';
import type { CredentialCache } from './credential-cache.ts';
import { rollKeys } from './keys.ts';
import { insertSession } from './sessions.ts';

/**
 * What creating a merchant needs from the webhooks module, which sits above this one: the issued secret, the SSRF
 * guard, the secret box and the live default endpoint (webhooks/endpoints.ts `webhookSetupPort` implements it).
 */
export interface WebhookSetupPort {
  generateSecret(): string;
  /** Refuses a live target the SSRF guard forbids: 400 WEBHOOK_URL_FORBIDDEN. */
  assertLiveTargetAllowed(url: string): Promise<void>;
  seal(secret: string, merchant_id: string): string;
  createLiveDefaultEndpoint(trx: Trx, merchant_id: string, url: string, secret: string): Promise<void>;
}
import { jwtLifetimeTooLong } from './errors.ts';

export interface MerchantsDeps {
  db: Db;
  clock: Clock;
  secrets: ServiceSecrets;
  /** Seals the issued webhook secret and creates the live default endpoint (createMerchant only). */
  webhooks?: WebhookSetupPort;
  /** The process's API key cache, told when keys are rolled (other processes' entries expire on their own). */
  key_cache?: CredentialCache;
  /** JWT_MAX_LIFETIME_SECONDS: the longest a merchant JWT may live; also the default lifetime. */
  jwt_max_lifetime_seconds?: number | undefined;
}

/** JWT_MAX_LIFETIME_SECONDS's default (config.ts), for callers that build deps by hand. */
export const DEFAULT_JWT_MAX_LIFETIME_SECONDS = 24 * 3600;
const maxLifetime = (deps: MerchantsDeps) => deps.jwt_max_lifetime_seconds ?? DEFAULT_JWT_MAX_LIFETIME_SECONDS;

export interface CreatedMerchant {
  merchant: { id: string; name: string; webhook_url: string | null; created_at: string };
  api_keys: { live: string; test: string; sandbox: string };
  webhook_secret: string;
  jwt: string;
}

/**
 * Creates a merchant with one key of each kind, a webhook secret and a JWT; the raw secrets exist only in the result.
 * The webhook secret is the live default endpoint's: with a `webhook_url` that endpoint is created now (the SSRF guard
 * applies: 400 WEBHOOK_URL_FORBIDDEN); without, the secret waits sealed on the merchant row for the first live
 * `PUT /v1/webhook-endpoint`.
 */
export async function createMerchant(
  deps: MerchantsDeps,
  input: { name: string; webhook_url?: string | undefined },
): Promise<CreatedMerchant> {
  const webhooks = deps.webhooks;
  if (!webhooks) throw new Error('createMerchant needs the webhooks port (secret box)');
  if (input.webhook_url) await webhooks.assertLiveTargetAllowed(input.webhook_url);
  const now = deps.clock.now();
  const id = randomUUID();
  const webhook_secret = webhooks.generateSecret();
  const keys = { live: generateApiKey('live'), test: generateApiKey('test'), sandbox: generateApiKey('sandbox') };
  await deps.db.transaction().execute(async (trx) => {
    const waiting_secret = input.webhook_url ? null : webhooks.seal(webhook_secret, id);
    await trx
      .insertInto('merchants')
      .values({ id, name: input.name, webhook_url: null, webhook_secret: waiting_secret, created_at: now })
      .execute();
    if (input.webhook_url) await webhooks.createLiveDefaultEndpoint(trx, id, input.webhook_url, webhook_secret);
    for (const [kind, key] of Object.entries(keys) as [keyof typeof keys, (typeof keys)['live']][]) {
      await trx
        .insertInto('api_keys')
        .values({ id: randomUUID(), merchant_id: id, kind, key_hash: key.hash, key_hint: key.hint, created_at: now })
        .execute();
    }
  });
  const jwt = await issueMerchantJwt(deps.secrets, deps.clock, {
    merchant_id: id,
    user_id: `owner:${id}`,
    expires_in_seconds: maxLifetime(deps),
  });
  return {
    merchant: { id, name: input.name, webhook_url: input.webhook_url ?? null, created_at: now.toISOString() },
    api_keys: { live: keys.live.raw, test: keys.test.raw, sandbox: keys.sandbox.raw },
    webhook_secret,
    jwt,
  };
}

export async function getMerchant(
  deps: Pick<MerchantsDeps, 'db'>,
  merchant_id: string,
): Promise<{ id: string; name: string; webhook_url: string | null }> {
  // The merchant's webhook URL is its live default endpoint's (webhook endpoints are per mode).
  const row = await deps.db
    .selectFrom('merchants as m')
    .leftJoin('webhook_endpoints as w', (join) =>
      join
        .onRef('w.merchant_id', '=', 'm.id')
        .on('w.is_sandbox', '=', false)
        .on('w.is_default', '=', true)
        .on('w.deleted_at', 'is', null),
    )
    .select(['m.id', 'm.name', 'w.url as webhook_url'])
    .where('m.id', '=', merchant_id)
    .executeTakeFirst();
  if (!row) throw notFound('Merchant');
  return row;
}

/** Merchants' names by id (what one merchant is shown of another it trades with). */
export async function merchantNames(executor: Executor, merchant_ids: readonly string[]): Promise<Map<string, string>> {
  if (merchant_ids.length === 0) return new Map();
  const rows = await executor
    .selectFrom('merchants')
    .select(['id', 'name'])
    .where('id', 'in', [...new Set(merchant_ids)])
    .execute();
  return new Map(rows.map((row) => [row.id, row.name]));
}

async function requireMerchant(deps: MerchantsDeps, merchant_id: string): Promise<void> {
  await getMerchant(deps, merchant_id);
}

export async function issueToken(
  deps: MerchantsDeps,
  merchant_id: string,
  input: {
    user_id?: string | undefined;
    mode?: CredentialMode | undefined;
    ttl_seconds?: number | undefined;
    expires_in_seconds?: number | undefined;
  },
): Promise<{ jwt: string; mode: CredentialMode; expires_at: string }> {
  const max_seconds = maxLifetime(deps);
  const lifetime_seconds = input.ttl_seconds ?? input.expires_in_seconds ?? max_seconds;
  if (lifetime_seconds > max_seconds) {
    const field = input.ttl_seconds !== undefined ? 'body.ttl_seconds' : 'body.expires_in_seconds';
    throw jwtLifetimeTooLong(max_seconds, field);
  }
  const mode = input.mode ?? 'live';
  const minted = await mintJwt(deps, merchant_id, {
    user_id: input.user_id ?? `owner:${merchant_id}`,
    lifetime_seconds,
    mode,
  });
  return { jwt: minted.jwt, mode, expires_at: minted.expires_at };
}

/** Signs a merchant JWT that counts as issued after the merchant's last token revocation. */
async function mintJwt(
  deps: MerchantsDeps,
  merchant_id: string,
  claims: { user_id: string; lifetime_seconds: number; mode: CredentialMode; key_id?: string },
): Promise<{ jwt: string; expires_at: string }> {
  const merchant = await deps.db
    .selectFrom('merchants')
    .select(['id', 'tokens_not_before'])
    .where('id', '=', merchant_id)
    .executeTakeFirst();
  if (!merchant) throw notFound('Merchant');
  const not_before = merchant.tokens_not_before;
  const jwt = await issueMerchantJwt(deps.secrets, deps.clock, {
    merchant_id,
    expires_in_seconds: claims.lifetime_seconds,
    not_before,
    ...claims,
  });
  const issued_at_s = Math.max(
    Math.floor(deps.clock.now().getTime() / 1000),
    not_before ? Math.ceil(not_before.getTime() / 1000) : 0,
  );
  return { jwt, expires_at: new Date((issued_at_s + claims.lifetime_seconds) * 1000).toISOString() };
}

/** A token traded for an API key lives this long unless asked for less: short, a client trades again when it ends. */
export const KEY_TOKEN_DEFAULT_SECONDS = 900;
export const KEY_TOKEN_MAX_SECONDS = 3600;

export interface AccessToken {
  access_token: string;
  merchant_id: string;
  token_type: 'Bearer';
  expires_in: number;
  expires_at: string;
  mode: CredentialMode;
}

/**
 * Trades a secret API key for a merchant JWT in the key's mode (OAuth 2.0 client credentials): the token reaches
 * the merchant routes (payouts, balance, disputes) and ends with the key, with the merchant's token revocation, or
 * at `expires_in`, whichever comes first.
 */
export async function exchangeApiKey(
  deps: MerchantsDeps,
  key: { merchant_id: string; key_id: string; key_kind: KeyKind },
  input: { ttl_seconds?: number | undefined },
): Promise<AccessToken> {
  const max_seconds = Math.min(KEY_TOKEN_MAX_SECONDS, maxLifetime(deps));
  const lifetime_seconds = input.ttl_seconds ?? Math.min(KEY_TOKEN_DEFAULT_SECONDS, max_seconds);
  if (lifetime_seconds > max_seconds) throw jwtLifetimeTooLong(max_seconds, 'body.ttl_seconds');
  const mode = keyMode(key.key_kind);
  const minted = await mintJwt(deps, key.merchant_id, {
    user_id: `key:${key.key_id}`,
    lifetime_seconds,
    mode,
    key_id: key.key_id,
  });
  return {
    access_token: minted.jwt,
    merchant_id: key.merchant_id,
    token_type: 'Bearer',
    expires_in: lifetime_seconds,
    expires_at: minted.expires_at,
    mode,
  };
}

/** Revokes every JWT issued and every dashboard session opened before now (tokens minted afterwards work). */
export async function revokeTokens(
  deps: MerchantsDeps,
  merchant_id: string,
): Promise<{ merchant_id: string; tokens_not_before: string }> {
  const now = deps.clock.now();
  const row = await deps.db
    .updateTable('merchants')
    .set({ tokens_not_before: now })
    .where('id', '=', merchant_id)
    .returning('id')
    .executeTakeFirst();
  if (!row) throw notFound('Merchant');
  return { merchant_id, tokens_not_before: now.toISOString() };
}

/** The operator's roll: every active key of one kind ends at once and a new one is issued (the raw key only in the result). */
export async function rollApiKey(
  deps: MerchantsDeps,
  merchant_id: string,
  kind: KeyKind,
): Promise<{ kind: KeyKind; key: string; key_hint: string; revoked: number }> {
  await requireMerchant(deps, merchant_id);
  const rolled = await rollKeys(deps, merchant_id, { kind }, 0);
  return { kind, key: rolled.raw_key, key_hint: rolled.key.hint, revoked: rolled.previous.length };
}

/** A dashboard browser session: an opaque cookie value, stored hashed. */
export async function createSession(
  deps: MerchantsDeps,
  merchant_id: string,
  input: { user_id: string; mode?: CredentialMode | undefined; expires_in_seconds?: number | undefined },
): Promise<{ session_token: string; cookie: string; mode: CredentialMode; expires_at: string }> {
  await requireMerchant(deps, merchant_id);
  const token = randomBase62(48);
  const now = deps.clock.now();
  const expires_at = new Date(now.getTime() + (input.expires_in_seconds ?? 12 * 3600) * 1000);
  await insertSession(deps.db, {
    id: randomUUID(),
    token_hash: sha256Hex(token),
    merchant_id,
    user_id: input.user_id,
    expires_at,
    created_at: now,
    is_sandbox: input.mode === 'sandbox',
  });
  return {
    session_token: token,
    cookie: `mpay_session=${token}; HttpOnly; Secure; SameSite=Lax; Path=/`,
    mode: input.mode ?? 'live',
    expires_at: expires_at.toISOString(),
  };
}

export async function countMerchants(db: Db): Promise<number> {
  const row = await db
    .selectFrom('merchants')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
