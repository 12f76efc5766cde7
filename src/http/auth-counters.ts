import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { MemoryRateLimiter, type RateLimitOutcome } from './rate-limit.ts';

/** A change of a windowed counter: `by` added, or the count set `to` a value. */
export type CounterChange = { key: string; by: number } | { key: string; to: number };

/** A windowed counter after a change: its count and when its window started. */
export interface CounterState {
  count: number;
  started_ms: number;
}

/**
 * The counters that limit guessing: failed-authentication buckets (per client address) and sign-in windows (per
 * address, per email and address, per email). Kept in the same store as the rate limits, so N api processes allow one
 * budget: Redis where REDIS_URL is set (RedisRateLimiter), else PostgreSQL (PostgresAuthCounters), or this process's
 * memory on PGlite (one process).
 */
export interface AuthCounters {
  /** Takes a token from the bucket `key` (capacity and refill `per_second`). */
  take(key: string, per_second: number): Promise<RateLimitOutcome>;
  /**
   * Applies the changes in their windows of `window_ms` (a window opens at the first change after the last ended), at
   * `now_ms` (the application's clock).
   */
  count(changes: CounterChange[], window_ms: number, now_ms: number): Promise<CounterState[]>;
}

/** Windowed counters in memory, for MemoryRateLimiter (PGlite: one process) and Redis's fallback. */
export class MemoryWindows {
  readonly #windows = new Map<string, CounterState>();

  count(changes: CounterChange[], window_ms: number, now_ms: number): CounterState[] {
    if (this.#windows.size >= 100_000)
      for (const [key, window] of this.#windows) if (now_ms - window.started_ms >= window_ms) this.#windows.delete(key);
    return changes.map((change) => {
      let window = this.#windows.get(change.key);
      if (!window || now_ms - window.started_ms >= window_ms) {
        window = { count: 0, started_ms: now_ms };
        this.#windows.set(change.key, window);
      }
      window.count = Math.max(0, 'to' in change ? change.to : window.count + change.by);
      return { ...window };
    });
  }
}

/** This process's counters (PGlite, or a store without Redis in tests that build it). */
export class MemoryAuthCounters implements AuthCounters {
  readonly #buckets: MemoryRateLimiter;
  readonly #windows = new MemoryWindows();

  /** `now_ms`: the buckets' clock (real time by default; the windows take the caller's). */
  constructor(now_ms: () => number = () => performance.timeOrigin + performance.now()) {
    this.#buckets = new MemoryRateLimiter({ live: 1, sandbox: 1 }, now_ms);
  }

  take(key: string, per_second: number): Promise<RateLimitOutcome> {
    return this.#buckets.take(key, per_second);
  }

  async count(changes: CounterChange[], window_ms: number, now_ms: number): Promise<CounterState[]> {
    return this.#windows.count(changes, window_ms, now_ms);
  }
}

/**
 * The counters in PostgreSQL (`auth_counters`): one budget for every api process. The buckets run on the server's
 * clock, the windows on the application's (the processes' clocks agree to the second).
 */
export class PostgresAuthCounters implements AuthCounters {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async take(key: string, per_second: number): Promise<RateLimitOutcome> {
    const { rows } = await sql<{ allowed: boolean; tokens: number }>`
      select allowed, tokens from mpay_auth_take(${key}, ${per_second}::float8)`.execute(this.#db);
    const { allowed, tokens } = rows[0]!;
    return {
      allowed,
      remaining: Math.max(0, Math.floor(tokens)),
      reset_seconds: Math.max(0, Math.ceil((per_second - tokens) / per_second)),
      retry_after_seconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / per_second)),
    };
  }

  async count(changes: CounterChange[], window_ms: number, now_ms: number): Promise<CounterState[]> {
    const { rows } = await sql<{ key: string; count: number; started_ms: number | string }>`
      select key, count, started_ms from mpay_auth_count(
        ${changes.map((change) => change.key)}::text[],
        ${changes.map((change) => ('by' in change ? change.by : 0))}::float8[],
        ${changes.map((change) => ('to' in change ? change.to : null))}::float8[],
        ${window_ms}::bigint, ${Math.round(now_ms)}::bigint)`.execute(this.#db);
    const by_key = new Map(rows.map((row) => [row.key, row]));
    return changes.map((change) => {
      const row = by_key.get(change.key)!;
      return { count: Number(row.count), started_ms: Number(row.started_ms) };
    });
  }
}
