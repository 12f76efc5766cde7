import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { merchantScope } from '../../http/auth.ts';
import { CsvEnum, Cursor, Envelope, Limit, NullableTimestamp, ok, Page, parseCsv, Timestamp, UuidParams } from '../../http/schemas.ts';
import { getEndpoint, listDeliveries, listEvents, recoverSince, redeliver, rotateSecret, setEndpoint, type WebhooksDeps } from './service.ts';
import type { DeliveryStatus } from './tables.ts';

const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'succeeded', 'failed', 'skipped'];
const DeliveryStatusSchema = Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('skipped')]);

const SecretShownOnce = Type.Object({
  url: Type.Union([Type.String(), Type.Null()]),
  secret: Type.String({ description: 'whsec_…: shown only in this response; keep it' }),
});

const EventSchema = Type.Object({
  id: Type.String(),
  type: Type.String(),
  resource_type: Type.String(),
  resource_id: Type.String(),
  created_at: Timestamp,
  delivery_status: Type.Union([DeliveryStatusSchema, Type.Null()]),
  payload: Type.Object({}, { additionalProperties: true, description: 'The envelope as delivered' }),
});

const DeliverySchema = Type.Object({
  id: Type.String(),
  event_id: Type.String(),
  event_type: Type.String(),
  resource_id: Type.String(),
  status: DeliveryStatusSchema,
  attempt_count: Type.Integer(),
  next_attempt_at: NullableTimestamp,
  last_attempt_at: NullableTimestamp,
  last_status_code: Type.Union([Type.Integer(), Type.Null()]),
  delivered_at: NullableTimestamp,
  created_at: Timestamp,
  attempts: Type.Array(
    Type.Object({
      attempt_number: Type.Integer(),
      url: Type.String(),
      succeeded: Type.Boolean(),
      status_code: Type.Union([Type.Integer(), Type.Null()]),
      error: Type.Union([Type.String(), Type.Null()]),
      duration_ms: Type.Integer(),
      response_excerpt: Type.Union([Type.String(), Type.Null()]),
      started_at: Timestamp,
    }),
  ),
});

export const webhookRoutes: FastifyPluginAsyncTypebox<{ deps: WebhooksDeps }> = async (app, { deps }) => {
  app.put(
    '/v1/webhook-endpoint',
    {
      config: { auth: 'key' },
      schema: {
        tags: ['webhooks'],
        summary: 'Set the webhook URL (one URL for live and sandbox events); returns the signing secret',
        body: Type.Object({ url: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 }) }, { additionalProperties: false }),
        response: { 200: Envelope(SecretShownOnce) },
      },
    },
    async (request) => ok(await setEndpoint(deps, merchantScope(request), request.body.url)),
  );

  app.get(
    '/v1/webhook-endpoint',
    {
      config: { auth: 'key' },
      schema: {
        tags: ['webhooks'],
        summary: 'Read the webhook URL (never the secret)',
        response: { 200: Envelope(Type.Object({ url: Type.Union([Type.String(), Type.Null()]), secret_set: Type.Boolean() })) },
      },
    },
    async (request) => ok(await getEndpoint(deps, merchantScope(request))),
  );

  app.post(
    '/v1/webhook-endpoint/rotate-secret',
    {
      config: { auth: 'key' },
      schema: { tags: ['webhooks'], summary: 'Replace the signing secret at once; the new one is shown only here', response: { 200: Envelope(SecretShownOnce) } },
    },
    async (request) => ok(await rotateSecret(deps, merchantScope(request))),
  );

  app.get(
    '/v1/events',
    {
      config: { auth: 'key' },
      schema: {
        tags: ['webhooks'],
        summary: 'Events of the last 30 days, newest first (the key\'s mode only)',
        querystring: Type.Object({
          type: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Event kind, e.g. payment.completed' })),
          resource_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          delivered: Type.Optional(Type.Boolean({ description: 'true: delivered; false: not (yet) delivered' })),
          cursor: Type.Optional(Cursor),
          limit: Limit,
        }),
        response: { 200: Page(EventSchema) },
      },
    },
    async (request) => listEvents(deps, merchantScope(request), request.query),
  );

  app.get(
    '/v1/webhook-deliveries',
    {
      config: { auth: 'key' },
      schema: {
        tags: ['webhooks'],
        summary: 'Delivery history: each delivery with every attempt (status, duration, response excerpt)',
        querystring: Type.Object({
          status: Type.Optional(CsvEnum(DELIVERY_STATUSES, 'Delivery status')),
          event_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          cursor: Type.Optional(Cursor),
          limit: Limit,
        }),
        response: { 200: Page(DeliverySchema) },
      },
    },
    async (request) => listDeliveries(deps, merchantScope(request), { ...request.query, status: parseCsv<DeliveryStatus>(request.query.status) }),
  );

  app.post(
    '/v1/webhook-deliveries/:id/redeliver',
    {
      config: { auth: 'key', errors: [404, 409] },
      schema: {
        tags: ['webhooks'],
        summary: 'Send one event again (fresh retry schedule, same event id)',
        params: UuidParams,
        response: { 200: Envelope(DeliverySchema) },
      },
    },
    async (request) => ok(await redeliver(deps, merchantScope(request), request.params.id)),
  );

  app.post(
    '/v1/webhook-deliveries/recover',
    {
      config: { auth: 'key', errors: [409] },
      schema: {
        tags: ['webhooks'],
        summary: 'Re-queue every delivery that failed (or found no endpoint) since a time',
        body: Type.Object({ since: Type.String({ format: 'date-time' }) }, { additionalProperties: false }),
        response: { 200: Envelope(Type.Object({ requeued: Type.Integer(), since: Timestamp })) },
      },
    },
    async (request) => ok(await recoverSince(deps, merchantScope(request), request.body.since)),
  );
};

