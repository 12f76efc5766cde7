import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';

/** How long the log keeps a call, and the most rows one page shows per key. */
export const REQUEST_LOG_DAYS = 3;
const FLUSH_ROWS = 200;
const FLUSH_DELAY_MS = 1000;
const PATH_MAX_CHARS = 300;

export interface RequestLogEntry {
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  request_id: string;
  created_at: string;
}

/**
 * Records every API call made with a key (method, path, status, duration, request id) for the Developers page. The
 * response hook only pushes to a buffer; one multi-row insert writes the buffer a second later (or at 200 rows), so
 * a call costs no database round trip of its own. A crash loses at most the last second of log, never a response.
 */
export class RequestLog {
  private buffer: (RequestLogEntry & { merchant_id: string; api_key_id: string; is_sandbox: boolean })[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly onError: (error: unknown) => void;

  constructor(db: Db, clock: Clock, onError: (error: unknown) => void) {
    this.db = db;
    this.clock = clock;
    this.onError = onError;
  }

  /** The onResponse hook: calls authenticated by an API key only. */
  readonly hook = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const principal = request.principal;
    if (principal?.kind !== 'key') return;
    this.buffer.push({
      merchant_id: principal.merchant_id,
      api_key_id: principal.key_id,
      is_sandbox: principal.is_sandbox,
      method: request.method,
      path: (request.url.split('?')[0] ?? '').slice(0, PATH_MAX_CHARS),
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime),
      request_id: String(request.id).slice(0, 128),
      created_at: this.clock.now().toISOString(),
    });
    if (this.buffer.length >= FLUSH_ROWS) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS).unref();
  };

  /** Writes what is buffered (one insert); callers that read the log flush first. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const rows = this.buffer;
    this.buffer = [];
    if (rows.length) {
      this.flushing = this.flushing.then(() =>
        this.db
          .insertInto('api_request_log')
          .values(rows.map((row) => ({ ...row, id: randomUUID(), created_at: new Date(row.created_at) })))
          .execute()
          .then(() => undefined, this.onError),
      );
    }
    return this.flushing;
  }

  /** The recent calls of one key of the merchant, newest first. */
  async recent(merchant_id: string, api_key_id: string, limit = 50): Promise<RequestLogEntry[]> {
    await this.flush();
    const rows = await this.db
      .selectFrom('api_request_log')
      .select(['method', 'path', 'status', 'duration_ms', 'request_id', 'created_at'])
      .where('merchant_id', '=', merchant_id)
      .where('api_key_id', '=', api_key_id)
      .where('created_at', '>=', new Date(this.clock.now().getTime() - REQUEST_LOG_DAYS * 24 * 3600 * 1000))
      .orderBy('created_at', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ ...row, created_at: row.created_at.toISOString() }));
  }

  /** Deletes calls older than the log keeps (the purge job). */
  async purge(): Promise<number> {
    const result = await this.db
      .deleteFrom('api_request_log')
      .where('created_at', '<', new Date(this.clock.now().getTime() - REQUEST_LOG_DAYS * 24 * 3600 * 1000))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
