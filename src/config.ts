import { isIP } from 'node:net';

/**
 * Every setting, parsed and validated once at start-up. A bad value stops the process with a message
 * that names the variable. docs/operations.md lists every one with its default.
 */

export type Role = 'api' | 'worker' | 'ledger';
export const ALL_ROLES: readonly Role[] = ['api', 'worker', 'ledger'];

export interface Config {
  port: number;
  host: string;
  database_url: string | undefined;
  data_dir: string;
  public_base_url: string;
  admin_service_token: string | undefined;
  internal_service_token: string | undefined;
  jwt_secret: string | undefined;
  /** Longest lifetime of a merchant JWT (and the default the admin route mints). */
  jwt_max_lifetime_seconds: number;
  /** 401s allowed per client address per second (token bucket, burst of the same size) before 429. */
  rate_limit_failed_auth_per_second: number;
  /** PostgreSQL URL migrations run with (the tables' owner); DATABASE_URL when unset. */
  database_owner_url: string | undefined;
  roles: ReadonlySet<Role>;
  ledger_url: string | undefined;
  /** The issuance account name the sell/buy matcher mints from (`treasury` unless LEDGER_MINT_SOURCE_ACCOUNT says otherwise). */
  ledger_mint_source_account: string;
  ledger_timeout_ms: number;
  receipt_validator: 'null_validator' | 'easyslip' | 'slip_qr';
  easyslip_base_url: string | undefined;
  easyslip_api_key: string | undefined;
  easyslip_timeout_ms: number;
  /**
   * Lets a verdict that checked neither amount nor payee (`slip_qr`, `null_validator`) complete a live payment leg
   * (closed tests only); otherwise such a leg waits for its payee's confirmation (DESIGN 3b).
   */
  allow_unverified_live_proofs: boolean;
  /** How long a slip whose provider answers `unverified`/`timeout` is asked again before it waits for its payee. */
  proof_check_hours: number;
  redis_url: string | undefined;
  /** How long a rate-limit call may wait for Redis before the in-process limiter takes over. */
  redis_timeout_ms: number;
  log_level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

  rate_limit_live_per_second: number;
  rate_limit_sandbox_per_second: number;
  proof_max_bytes: number;
  payments_create_gone_after_sunset: boolean;

  receiver_confirm_max_attempts: number;
  pending_funds_ttl_hours: number;
  receiver_confirm_window_hours: number;
  sell_order_pending_ttl_hours: number;
  /** A refund's claim link lives this long; unclaimed, the refund is canceled. */
  refund_claim_days: number;
  /** A refund slip no provider checked stands when the buyer says nothing for this long. */
  refund_confirm_days: number;
  buy_order_pending_ttl_hours: number;
  cash_leg_retry_max: number;
  cash_leg_retry_timeout_hours: number;
  gateway_dispute_auto_open_enabled: boolean;

  balance_apr_bps: number;
  balance_entry_fee_usd: string;
  balance_deficit_grace_days: number;
  /** Buffer threshold as a share of the trailing 30-day volume, in basis points. */
  balance_buffer_threshold_bps: number;

  webhook_timeout_ms: number;
  /** AES-256-GCM key sealing webhook secrets at rest (32 bytes, base64 or hex); see webhooks/secret-box.ts. */
  webhook_secrets_key: string | undefined;
  /** Lets webhook endpoints of either mode target private and loopback addresses (closed deployments only). */
  webhook_allow_private_targets: boolean;
  /** Deliveries one worker process sends at once, and at most this many to any one endpoint. */
  webhook_max_in_flight: number;
  webhook_max_in_flight_per_endpoint: number;
  fx_quote_lock_seconds: number;
  settlement_fee_bps: number;
  settlement_interval_seconds: number;
  worker_poll_interval_ms: number;
  /** Origins browsers may call the API from (CORS); `*` for any. Default: the server's own origins, so /docs "Try it out" works. */
  cors_allowed_origins: readonly string[];

  /** PostgreSQL sessions of the pool: longest statement, longest lock wait, longest wait for a pooled connection. */
  db_statement_timeout_ms: number;
  db_lock_timeout_ms: number;
  db_pool_acquire_timeout_ms: number;
  db_pool_max: number;
  /** A request's headers must arrive within this; the whole request (body included) within the next. */
  http_headers_timeout_ms: number;
  http_request_timeout_ms: number;
  /** An idle keep-alive connection is closed after this. */
  http_keep_alive_timeout_ms: number;
  /** Proxies whose X-Forwarded-For is believed (Fastify's trustProxy): false, or addresses, CIDR ranges, `loopback`. */
  trust_proxy: false | string[];
  /** The longest wait a sign-in gets for its email's recent failures (from any address); never a refusal. */
  sign_in_max_delay_ms: number;
  /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
  metrics_token: string | undefined;
  /** Where a process that serves no API (`ROLES=worker`) serves `/metrics` and `/healthz`; unset: it serves nothing. */
  metrics_port: number | undefined;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function read(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['false', '0', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function url(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = read(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw.replace(/\/+$/, '');
}

/** A 32-byte key written as 64 hex digits or as base64. */
function secretsKey(env: Env, name: string): string | undefined {
  const raw = read(env, name);
  if (raw === undefined) return undefined;
  const bytes = /^[0-9a-fA-F]{64}$/.test(raw)
    ? 32
    : /^[A-Za-z0-9+/]{43}=?$/.test(raw)
      ? Buffer.from(raw, 'base64').length
      : 0;
  if (bytes !== 32)
    throw new ConfigError(`${name} must be 32 bytes as 64 hex digits or base64 (e.g. openssl rand -base64 32)`);
  return raw;
}

function secret(env: Env, name: string, min_length: number): string | undefined {
  const raw = read(env, name);
  if (raw !== undefined && raw.length < min_length) {
    throw new ConfigError(`${name} must be at least ${min_length} characters`);
  }
  return raw;
}

function corsOrigins(env: Env, port: number, public_base_url: string): string[] {
  const raw = read(env, 'CORS_ALLOWED_ORIGINS');
  if (raw === undefined)
    return [...new Set([new URL(public_base_url).origin, `http://127.0.0.1:${port}`, `http://localhost:${port}`])];
  if (raw === '*') return ['*'];
  return raw.split(',').map((part) => {
    const origin = part.trim();
    let parsed: URL;
    try {
      parsed = new URL(origin);
    } catch {
      throw new ConfigError(
        `CORS_ALLOWED_ORIGINS must be * or comma-separated origins like https://shop.example, got "${origin}"`,
      );
    }
    if (parsed.origin !== origin.replace(/\/+$/, ''))
      throw new ConfigError(`CORS_ALLOWED_ORIGINS entries must be origins (scheme://host[:port]), got "${origin}"`);
    return parsed.origin;
  });
}

const PROXY_KEYWORDS = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** TRUST_PROXY: unset or false trusts nobody; otherwise comma-separated addresses, CIDR ranges or `loopback`. */
function trustProxy(env: Env): false | string[] {
  const raw = read(env, 'TRUST_PROXY');
  if (raw === undefined || ['false', '0', 'no', 'off'].includes(raw.toLowerCase())) return false;
  return raw.split(',').map((part) => {
    const entry = part.trim();
    if (PROXY_KEYWORDS.has(entry)) return entry;
    const [address, bits, ...rest] = entry.split('/');
    const family = address ? isIP(address) : 0;
    const bits_ok = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (family === 0 || !bits_ok || rest.length > 0) {
      throw new ConfigError(
        `TRUST_PROXY must be false or comma-separated addresses, CIDR ranges or "loopback", got "${entry}"`,
      );
    }
    return entry;
  });
}

/** The mint source when LEDGER_MINT_SOURCE_ACCOUNT is unset: payouts work out of the box (docs/payouts.md). */
export const DEFAULT_MINT_SOURCE_ACCOUNT = 'treasury';

/**
 * LEDGER_MINT_SOURCE_ACCOUNT: an issuance account name (`treasury`), or the full name of one in either mode
 * (`live:issuance:treasury`), which is reduced to its name; the matcher uses `<mode>:issuance:<name>` per mode.
 */
function mintSourceAccount(env: Env): string {
  const raw = read(env, 'LEDGER_MINT_SOURCE_ACCOUNT');
  if (raw === undefined) return DEFAULT_MINT_SOURCE_ACCOUNT;
  const name = /^(live|sandbox):issuance:(.+)$/.exec(raw)?.[2] ?? raw;
  if (!/^[A-Za-z0-9_.-]{1,100}$/.test(name)) {
    throw new ConfigError(
      `LEDGER_MINT_SOURCE_ACCOUNT must be an issuance account name of letters, digits, "_", "." or "-" (e.g. "treasury"), or a full issuance account name (e.g. "live:issuance:treasury"), got "${raw}"`,
    );
  }
  return name;
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const roles_raw = read(env, 'ROLES');
  const roles = new Set<Role>();
  for (const part of (roles_raw ?? ALL_ROLES.join(','))
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean)) {
    if (!(ALL_ROLES as readonly string[]).includes(part)) {
      throw new ConfigError(`ROLES must be a comma-separated subset of ${ALL_ROLES.join(',')}, got "${roles_raw}"`);
    }
    roles.add(part as Role);
  }
  if (roles.size === 0) throw new ConfigError('ROLES must name at least one role');

  const receipt_validator = oneOf(
    env,
    'RECEIPT_VALIDATOR',
    ['slip_qr', 'null_validator', 'easyslip'] as const,
    'slip_qr',
  );
  const easyslip_base_url = url(env, 'EASYSLIP_BASE_URL', ['http:', 'https:']);
  const easyslip_api_key = read(env, 'EASYSLIP_API_KEY');
  if (receipt_validator === 'easyslip' && (!easyslip_base_url || !easyslip_api_key)) {
    throw new ConfigError('RECEIPT_VALIDATOR=easyslip needs EASYSLIP_BASE_URL and EASYSLIP_API_KEY');
  }
  const entry_fee = read(env, 'BALANCE_ENTRY_FEE_USD') ?? '25.00';
  if (!/^\d+(\.\d{1,2})?$/.test(entry_fee))
    throw new ConfigError(`BALANCE_ENTRY_FEE_USD must be a decimal like 25.00, got "${entry_fee}"`);

  const http_headers_timeout_ms = integer(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000);
  const http_request_timeout_ms = integer(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000);
  if (http_headers_timeout_ms > http_request_timeout_ms) {
    throw new ConfigError(
      `HTTP_HEADERS_TIMEOUT_MS (${http_headers_timeout_ms}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${http_request_timeout_ms})`,
    );
  }

  return {
    port,
    host: read(env, 'HOST') ?? '127.0.0.1',
    database_url: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    data_dir: read(env, 'DATA_DIR') ?? './data',
    public_base_url: url(env, 'PUBLIC_BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`,
    admin_service_token: secret(env, 'ADMIN_SERVICE_TOKEN', 16),
    internal_service_token: secret(env, 'INTERNAL_SERVICE_TOKEN', 16),
    jwt_secret: secret(env, 'JWT_SECRET', 32),
    jwt_max_lifetime_seconds: integer(env, 'JWT_MAX_LIFETIME_SECONDS', 24 * 3600, 60, 90 * 24 * 3600),
    rate_limit_failed_auth_per_second: integer(env, 'RATE_LIMIT_FAILED_AUTH_PER_SECOND', 5, 1, 1_000_000),
    database_owner_url: url(env, 'DATABASE_OWNER_URL', ['postgres:', 'postgresql:']),
    roles,
    ledger_url: url(env, 'LEDGER_URL', ['http:', 'https:']),
    ledger_mint_source_account: mintSourceAccount(env),
    ledger_timeout_ms: integer(env, 'LEDGER_TIMEOUT_MS', 5_000, 100, 60_000),
    receipt_validator,
    easyslip_base_url,
    easyslip_api_key,
    easyslip_timeout_ms: integer(env, 'EASYSLIP_TIMEOUT_MS', 10_000, 100, 120_000),
    allow_unverified_live_proofs: boolean(env, 'ALLOW_UNVERIFIED_LIVE_PROOFS', false),
    proof_check_hours: integer(env, 'PROOF_CHECK_HOURS', 24, 1, 24 * 30),
    redis_url: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redis_timeout_ms: integer(env, 'REDIS_TIMEOUT_MS', 50, 5, 10_000),
    log_level: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),

    rate_limit_live_per_second: integer(env, 'RATE_LIMIT_LIVE_PER_SECOND', 100, 1, 1_000_000),
    rate_limit_sandbox_per_second: integer(env, 'RATE_LIMIT_SANDBOX_PER_SECOND', 25, 1, 1_000_000),
    proof_max_bytes: integer(env, 'PROOF_MAX_BYTES', 10 * 1024 * 1024, 1024, 100 * 1024 * 1024),
    payments_create_gone_after_sunset: boolean(env, 'PAYMENTS_CREATE_GONE_AFTER_SUNSET', false),

    receiver_confirm_max_attempts: integer(env, 'RECEIVER_CONFIRM_MAX_ATTEMPTS', 5, 1, 100),
    pending_funds_ttl_hours: integer(env, 'PENDING_FUNDS_TTL_HOURS', 72, 1, 24 * 365),
    receiver_confirm_window_hours: integer(env, 'RECEIVER_CONFIRM_WINDOW_HOURS', 24, 1, 24 * 365),
    sell_order_pending_ttl_hours: integer(env, 'SELL_ORDER_PENDING_TTL_HOURS', 24, 1, 24 * 365),
    refund_claim_days: integer(env, 'REFUND_CLAIM_DAYS', 30, 1, 365),
    refund_confirm_days: integer(env, 'REFUND_CONFIRM_DAYS', 7, 1, 90),
    buy_order_pending_ttl_hours: integer(env, 'BUY_ORDER_PENDING_TTL_HOURS', 24, 1, 24 * 365),
    cash_leg_retry_max: integer(env, 'CASH_LEG_RETRY_MAX', 5, 1, 100),
    cash_leg_retry_timeout_hours: integer(env, 'CASH_LEG_RETRY_TIMEOUT_HOURS', 48, 1, 24 * 365),
    gateway_dispute_auto_open_enabled: boolean(env, 'GATEWAY_DISPUTE_AUTO_OPEN_ENABLED', false),

    balance_apr_bps: integer(env, 'BALANCE_APR_BPS', 1800, 0, 100_000),
    balance_entry_fee_usd: entry_fee,
    balance_deficit_grace_days: integer(env, 'BALANCE_DEFICIT_GRACE_DAYS', 7, 0, 365),
    balance_buffer_threshold_bps: integer(env, 'BALANCE_BUFFER_THRESHOLD_BPS', 1000, 0, 10_000),

    webhook_timeout_ms: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    webhook_secrets_key: secretsKey(env, 'WEBHOOK_SECRETS_KEY'),
    webhook_allow_private_targets: boolean(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS', false),
    webhook_max_in_flight: integer(env, 'WEBHOOK_MAX_IN_FLIGHT', 64, 1, 10_000),
    webhook_max_in_flight_per_endpoint: integer(env, 'WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT', 4, 1, 1_000),
    fx_quote_lock_seconds: integer(env, 'FX_QUOTE_LOCK_SECONDS', 30, 1, 3600),
    settlement_fee_bps: integer(env, 'SETTLEMENT_FEE_BPS', 150, 0, 10_000),
    settlement_interval_seconds: integer(env, 'SETTLEMENT_INTERVAL_SECONDS', 3600, 1, 7 * 24 * 3600),
    worker_poll_interval_ms: integer(env, 'WORKER_POLL_INTERVAL_MS', 1000, 10, 60_000),
    cors_allowed_origins: corsOrigins(
      env,
      port,
      url(env, 'PUBLIC_BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`,
    ),

    db_statement_timeout_ms: integer(env, 'DB_STATEMENT_TIMEOUT_MS', 5_000, 100, 3_600_000),
    db_lock_timeout_ms: integer(env, 'DB_LOCK_TIMEOUT_MS', 3_000, 10, 3_600_000),
    db_pool_acquire_timeout_ms: integer(env, 'DB_POOL_ACQUIRE_TIMEOUT_MS', 3_000, 10, 600_000),
    db_pool_max: integer(env, 'DB_POOL_MAX', 20, 1, 1_000),
    http_headers_timeout_ms,
    http_request_timeout_ms,
    http_keep_alive_timeout_ms: integer(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 60_000, 100, 3_600_000),
    trust_proxy: trustProxy(env),
    metrics_token: secret(env, 'METRICS_TOKEN', 16),
    metrics_port: read(env, 'METRICS_PORT') === undefined ? undefined : integer(env, 'METRICS_PORT', 0, 0, 65_535),
    sign_in_max_delay_ms: integer(env, 'SIGN_IN_MAX_DELAY_MS', 4_000, 0, 30_000),
  };
}
