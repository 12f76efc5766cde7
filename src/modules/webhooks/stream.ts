import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { DatabaseHandle, Db } from '../../db/database.ts';
import { merchantScope } from '../../http/auth.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { AppError } from '../../lib/errors.ts';
import { generateWebhookSecret, signedHeaders } from './signing.ts';

/**
 * Sandbox events as server-sent events, the way `mpay listen` receives them (as the Stripe CLI does): no endpoint on
 * the developer's machine, so nothing on the gateway's side ever connects to it. Each stream signs with a secret of its
 * own, sent first (`event: ready`); every event then comes as `event: webhook` with the exact body and the headers a
 * delivery would carry, so the forwarded request verifies like a real one. Only events written after the stream opened
 * (or after `Last-Event-ID`, for a reconnect) are sent.
 */
export const STREAM_POLL_MS = 250;
const HEARTBEAT_MS = 15_000;
const BATCH = 100;
/** Streams one merchant may hold open in this process. */
export const MAX_STREAMS_PER_MERCHANT = 5;

export interface StreamDeps {
  db: Db;
  clock: { now(): Date };
  /** Wakes the streams at once after a commit that wrote events in this process (others are polled). */
  commits: DatabaseHandle['commits'];
}

const tooManyStreams = () =>
  new AppError('RATE_LIMITED', `At most ${MAX_STREAMS_PER_MERCHANT} event streams per merchant at once`);

function write(reply: FastifyReply, event: string, data: unknown, id?: number): void {
  reply.raw.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

async function latestSeq(db: Db, scope: MerchantScope): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('merchant_id', '=', scope.merchant_id)
    .where('is_sandbox', '=', true)
    .executeTakeFirst();
  return Number(row?.seq ?? 0);
}

export const eventStreamRoutes: FastifyPluginAsyncTypebox<{ deps: StreamDeps }> = async (app, { deps }) => {
  const open = new Map<string, Set<() => void>>();
  // Streams never end on their own: closing the server ends them.
  app.addHook('preClose', async () => {
    for (const streams of open.values()) for (const end of [...streams]) end();
  });

  app.get(
    '/v1/sandbox/events/stream',
    {
      config: { auth: 'key', mode: 'sandbox_only', errors: [403, 429] },
      schema: {
        // a response that never ends: out of the document (and so out of generated clients and fuzzing)
        hide: true,
        tags: ['sandbox'],
        summary: 'Sandbox events as server-sent events, signed with a secret of the stream (mpay listen)',
        querystring: Type.Object({
          events: Type.Optional(
            Type.String({
              maxLength: 2000,
              pattern: '^[a-z0-9_.*,]+$',
              description: 'Comma-separated event types; default all',
            }),
          ),
        }),
        headers: Type.Object({
          'last-event-id': Type.Optional(Type.String({ pattern: '^\\d{1,18}$' })),
          // a reconnecting listener keeps signing with the secret it was given (it is the listener's own)
          'x-listen-secret': Type.Optional(Type.String({ pattern: '^whsec_[A-Za-z0-9+/=]{32,100}$' })),
        }),
      },
    },
    async (request, reply) => {
      const scope = merchantScope(request);
      const streams = open.get(scope.merchant_id) ?? new Set();
      if (streams.size >= MAX_STREAMS_PER_MERCHANT) throw tooManyStreams();
      const types = request.query.events?.split(',').filter(Boolean);
      const all = types === undefined || types.includes('*');
      const resume = request.headers['last-event-id'];
      let after_seq = resume === undefined ? await latestSeq(deps.db, scope) : Number(resume);
      const secret = request.headers['x-listen-secret'] ?? generateWebhookSecret();

      reply.hijack();
      reply.raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        'x-accel-buffering': 'no',
        'x-request-id': request.id,
      });
      write(reply, 'ready', { secret, mode: 'sandbox', events: all ? ['*'] : types });

      let ended = false;
      let busy = false;
      let again = false;
      const send = async () => {
        if (busy) return void (again = true);
        busy = true;
        try {
          do {
            again = false;
            let select = deps.db
              .selectFrom('events')
              .select(['id', 'seq', 'type', 'payload'])
              .where('merchant_id', '=', scope.merchant_id)
              .where('is_sandbox', '=', true)
              .where('seq', '>', after_seq)
              .orderBy('seq')
              .limit(BATCH);
            if (!all) select = select.where('type', 'in', types);
            const rows = await select.execute();
            for (const row of rows) {
              if (ended) return;
              const body = JSON.stringify(typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload);
              const headers = {
                'content-type': 'application/json',
                ...signedHeaders(secret, row.id, Math.floor(deps.clock.now().getTime() / 1000), body),
              };
              write(reply, 'webhook', { id: row.id, type: row.type, headers, body }, Number(row.seq));
              after_seq = Number(row.seq);
            }
            if (rows.length === BATCH) again = true;
          } while (again && !ended);
        } catch (error) {
          // a database that does not answer now is asked again at the next poll
          request.log.warn({ err: error }, 'event stream poll failed');
        } finally {
          busy = false;
        }
      };
      const poll = setInterval(() => void send(), STREAM_POLL_MS);
      const heartbeat = setInterval(() => reply.raw.write(': keep-alive\n\n'), HEARTBEAT_MS);
      const unwatch = deps.commits.on('events', () => void send());
      const end = () => {
        if (ended) return;
        ended = true;
        clearInterval(poll);
        clearInterval(heartbeat);
        unwatch();
        streams.delete(end);
        if (streams.size === 0) open.delete(scope.merchant_id);
        reply.raw.end();
      };
      streams.add(end);
      open.set(scope.merchant_id, streams);
      request.raw.on('close', end);
      reply.raw.on('close', end);
    },
  );
};
