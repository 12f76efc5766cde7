import { Redis } from 'ioredis';
import { MemoryWindows, type AuthCounters, type CounterChange, type CounterState } from './auth-counters.ts';

export interface RateLimitOutcome {
  allowed: boolean;
  remaining: number;
  /** Seconds until the bucket is full again. */
  reset_seconds: number;
  retry_after_seconds: number;
}

/**
 * Token bucket per caller: capacity = the per-second rate, refilled continuously. Written here rather than
 * taken from @fastify/rate-limit because that plugin counts fixed windows and emits the older header drafts.
 */
export interface RateLimiter {
  readonly limits: { live: number; sandbox: number };
  take(key: string, per_second: number): Promise<RateLimitOutcome>;
  /** For /readyz: a store that fell back to something weaker says so (still ok: requests are limited and served). */
  health?(): { ok: boolean; detail?: string };
  close(): Promise<void>;
}

function outcome(tokens_after: number, allowed: boolean, per_second: number): RateLimitOutcome {
  const missing = per_second - tokens_after;
  return {
    allowed,
    remaining: Math.max(0, Math.floor(tokens_after)),
    reset_seconds: Math.max(0, Math.ceil(missing / per_second)),
    retry_after_seconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens_after) / per_second)),
  };
}

export class MemoryRateLimiter implements RateLimiter {
  readonly limits: { live: number; sandbox: number };
  readonly #buckets = new Map<string, { tokens: number; updated_ms: number }>();
  readonly #now_ms: () => number;

  constructor(
    limits: { live: number; sandbox: number },
    now_ms: () => number = () => performance.timeOrigin + performance.now(),
  ) {
    this.limits = limits;
    this.#now_ms = now_ms;
  }

  async take(key: string, per_second: number): Promise<RateLimitOutcome> {
    const now_ms = this.#now_ms();
    const bucket = this.#buckets.get(key) ?? { tokens: per_second, updated_ms: now_ms };
    bucket.tokens = Math.min(per_second, bucket.tokens + ((now_ms - bucket.updated_ms) / 1000) * per_second);
    bucket.updated_ms = now_ms;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.#buckets.set(key, bucket);
    if (this.#buckets.size > 100_000) this.#evictFull(now_ms);
    return outcome(bucket.tokens, allowed, per_second);
  }

  /** Seconds until the bucket holds a token again, without taking one (0: a request would pass). */
  waitSeconds(key: string, per_second: number): number {
    const bucket = this.#buckets.get(key);
    if (!bucket) return 0;
    const tokens = Math.min(per_second, bucket.tokens + ((this.#now_ms() - bucket.updated_ms) / 1000) * per_second);
    return tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / per_second));
  }

  #evictFull(now_ms: number): void {
    for (const [key, bucket] of this.#buckets) {
      if (now_ms - bucket.updated_ms > 60_000) this.#buckets.delete(key);
    }
  }

  async close(): Promise<void> {}
}

// KEYS[1] bucket; ARGV[1] rate per second. Server time, so the api processes' clocks need not agree.
// Returns {allowed, tokens * 1000}.
const TAKE_SCRIPT = `
local rate = tonumber(ARGV[1])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'updated')
local tokens = tonumber(state[1]) or rate
local updated = tonumber(state[2]) or now
tokens = math.min(rate, tokens + math.max(0, now - updated) / 1000 * rate)
local allowed = 0
if tokens >= 1 then tokens = tokens - 1; allowed = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'updated', tostring(now))
redis.call('PEXPIRE', KEYS[1], 60000)
return {allowed, math.floor(tokens * 1000)}
`;

// KEYS: the counters; ARGV[1] the window in ms, ARGV[2] now (the application's clock, ms), then per key its mode
// ('by' or 'to') and value. Returns {count, started_ms} per key, flattened.
const COUNT_SCRIPT = `
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[1])
local out = {}
for i, key in ipairs(KEYS) do
  local mode = ARGV[2 * i + 1]
  local value = tonumber(ARGV[2 * i + 2])
  local state = redis.call('HMGET', key, 'count', 'started')
  local count = tonumber(state[1]) or 0
  local started = tonumber(state[2])
  if not started or now - started >= window then count = 0; started = now end
  if mode == 'to' then count = value else count = count + value end
  if count < 0 then count = 0 end
  redis.call('HSET', key, 'count', tostring(count), 'started', tostring(started))
  redis.call('PEXPIRE', key, math.max(1, started + window - now))
  out[#out + 1] = count
  out[#out + 1] = started
end
return out
`;

/**
 * Shared buckets for N api processes. Redis must never slow requests down: no offline queue (a command while
 * disconnected fails at once), a command timeout of tens of milliseconds, and ioredis reconnecting in the background.
 * While Redis does not answer, the in-process limiter takes over (each process then enforces the limit alone), the
 * outage is reported through `on_error` once per outage, and `health()` reports the degraded state for /readyz.
 */
export class RedisRateLimiter implements RateLimiter, AuthCounters {
  readonly limits: { live: number; sandbox: number };
  readonly #redis: Redis;
  readonly #fallback: MemoryRateLimiter;
  readonly #fallback_windows = new MemoryWindows();
  readonly #on_error: (error: Error) => void;
  #degraded_since: Date | null = null;
  #last_error = '';

  constructor(
    limits: { live: number; sandbox: number },
    redis_url: string,
    on_error: (error: Error) => void = () => {},
    options: { timeout_ms?: number } = {},
  ) {
    this.limits = limits;
    this.#on_error = on_error;
    this.#fallback = new MemoryRateLimiter(limits);
    const timeout_ms = options.timeout_ms ?? 50;
    this.#redis = new Redis(redis_url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: Math.max(timeout_ms * 4, 200), // the same bound as #first_connection
      commandTimeout: timeout_ms,
      // Background reconnection, backing off to one attempt every 2 s.
      retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
    });
    this.#redis.on('error', () => {});
    this.#redis.on('ready', () => {
      this.#degraded_since = null;
    });
    // Requests in the first moments after start wait for the first connection attempt (bounded by its timeout), so
    // that N processes share one budget from the start; after that, an outage never makes a request wait.
    const connect_timeout_ms = Math.max(timeout_ms * 4, 200);
    this.#first_connection = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, connect_timeout_ms);
      timer.unref();
      const settle = () => {
        clearTimeout(timer);
        resolve();
      };
      this.#redis.once('ready', settle);
      this.#redis.once('error', settle);
      this.#redis.once('end', settle);
    });
  }

  readonly #first_connection: Promise<void>;

  async take(key: string, per_second: number): Promise<RateLimitOutcome> {
    if (this.#redis.status === 'connecting' || this.#redis.status === 'connect') await this.#first_connection;
    if (this.#redis.status === 'ready') {
      try {
        const [allowed, tokens_milli] = (await this.#redis.eval(TAKE_SCRIPT, 1, `mpay:rl:${key}`, per_second)) as [
          number,
          number,
        ];
        this.#degraded_since = null;
        return outcome(tokens_milli / 1000, allowed === 1, per_second);
      } catch (error) {
        this.#degrade(error as Error);
      }
    } else {
      this.#degrade(new Error(`Redis is ${this.#redis.status}`));
    }
    return this.#fallback.take(key, per_second);
  }

  /** Sign-in windows (AuthCounters), shared through Redis; this process's memory while Redis does not answer. */
  async count(changes: CounterChange[], window_ms: number, now_ms: number): Promise<CounterState[]> {
    if (this.#redis.status === 'connecting' || this.#redis.status === 'connect') await this.#first_connection;
    if (this.#redis.status === 'ready') {
      try {
        const flat = (await this.#redis.eval(
          COUNT_SCRIPT,
          changes.length,
          ...changes.map((change) => `mpay:ac:${change.key}`),
          window_ms,
          Math.round(now_ms),
          ...changes.flatMap((change) => ('to' in change ? ['to', change.to] : ['by', change.by])),
        )) as number[];
        this.#degraded_since = null;
        return changes.map((_, index) => ({ count: flat[2 * index]!, started_ms: flat[2 * index + 1]! }));
      } catch (error) {
        this.#degrade(error as Error);
      }
    } else {
      this.#degrade(new Error(`Redis is ${this.#redis.status}`));
    }
    return this.#fallback_windows.count(changes, window_ms, now_ms);
  }

  #degrade(error: Error): void {
    this.#last_error = error.message;
    if (this.#degraded_since) return;
    this.#degraded_since = new Date();
    this.#on_error(error);
  }

  health(): { ok: boolean; detail?: string } {
    if (!this.#degraded_since) return { ok: true, detail: 'redis' };
    return {
      ok: true,
      detail: `degraded: Redis unreachable since ${this.#degraded_since.toISOString()} (${this.#last_error}); the in-process limiter is in use and Redis is retried in the background`,
    };
  }

  async close(): Promise<void> {
    // disconnect, not quit: quit waits for a server that may be gone
    this.#redis.disconnect();
  }
}
