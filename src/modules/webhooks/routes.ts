import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { merchantScope } from '../../http/auth.ts';
import { CsvEnum, Envelope, ListQuery, ok, Page, splitCsv, Timestamp, UuidParams } from '../../http/schemas.ts';
import {
  createEndpoint,
  DEFAULT_ROTATION_GRACE_SECONDS,
  deleteEndpoint,
  getEndpointById,
  listEndpoints,
  MAX_ENDPOINTS_PER_MODE,
  MAX_ROTATION_GRACE_SECONDS,
  rotateEndpointSecret,
  updateEndpoint,
  type WebhooksDeps,
} from './endpoints.ts';
import { getDefaultEndpoint, rotateDefaultSecret, setDefaultEndpoint } from './default-endpoint.ts';
import { listDeliveries, listEvents, recoverSince, redeliver } from './service.ts';
import { DeliverySchema, Description, EndpointSchema, EventSchema } from './schema.ts';
import type { DeliveryStatus } from './tables.ts';

const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'succeeded', 'failed', 'skipped'];

const SecretShownOnce = Type.Object({
  url: Type.Union([Type.String(), Type.Null()]),
  secret: Type.String({ description: 'whsec_…: shown only in this response; keep it' }),
});

export const WebhookUrl = Type.String({
  format: 'uri',
  pattern: '^https?://',
  maxLength: 2048,
  description: 'http(s) URL; live endpoints must resolve to public addresses (400 WEBHOOK_URL_FORBIDDEN)',
});
export const EnabledEvents = Type.Array(
  Type.String({ pattern: '^(\\*|[a-z][a-z0-9_]*(\\.[a-z0-9_]+)+)$', maxLength: 100 }),
  {
    minItems: 1,
    maxItems: 64,
    description: 'Event types (e.g. payment.completed), or ["*"] for every type (the default)',
  },
);

/** A webhook endpoint's create body (a merchant's or a seller's). */
export const CreateEndpointBody = Type.Object(
  {
    url: WebhookUrl,
    description: Type.Optional(Description),
    enabled_events: Type.Optional(EnabledEvents),
    disabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
/** A webhook endpoint's update body: at least one of the create's fields. */
export const UpdateEndpointBody = Type.Object(
  {
    url: Type.Optional(WebhookUrl),
    description: Type.Optional(Description),
    enabled_events: Type.Optional(EnabledEvents),
    disabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const EndpointWithSecretSchema = Type.Intersect([
  EndpointSchema,
  Type.Object({ secret: Type.String({ description: 'whsec_…: shown only in this response; keep it' }) }),
]);
/** The rotation body is optional: a POST without one rotates with the default grace period. */
const RotateBody = Type.Object(
  {
    grace_period_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_ROTATION_GRACE_SECONDS,
        description: `How long the previous secret keeps signing beside the new one (default ${DEFAULT_ROTATION_GRACE_SECONDS}; 0 drops it at once)`,
      }),
    ),
  },
  { additionalProperties: false },
);
const optionalBody = async (request: { body: unknown }) => {
  request.body ??= {};
};
const ENDPOINT_NOTE =
  "A credential manages only its own mode's endpoints (live key, live merchant JWT or session: live; test/sandbox key or a sandbox JWT/session: sandbox); another mode's or merchant's endpoint is 404.";

export const webhookRoutes: FastifyPluginAsyncTypebox<{ deps: WebhooksDeps }> = async (app, { deps }) => {
  app.put(
    '/v1/webhook-endpoint',
    {
      config: { auth: 'key', errors: [409, 'WEBHOOK_URL_FORBIDDEN'] },
      schema: {
        tags: ['webhooks'],
        summary: "Set the default webhook endpoint of the caller's mode; returns the signing secret",
        description: `Live credentials set the live default endpoint, test/sandbox keys the sandbox one; events of one mode never go to the other's endpoints. ${ENDPOINT_NOTE}`,
        body: Type.Object({ url: WebhookUrl }, { additionalProperties: false }),
        response: { 200: Envelope(SecretShownOnce) },
      },
    },
    async (request) => {
      const { url, secret } = await setDefaultEndpoint(deps, merchantScope(request), request.body.url);
      return ok({ url, secret });
    },
  );

  app.get(
    '/v1/webhook-endpoint',
    {
      config: { auth: 'key' },
      schema: {
        tags: ['webhooks'],
        summary: "Read the caller's mode's default webhook URL (never the secret)",
        response: {
          200: Envelope(Type.Object({ url: Type.Union([Type.String(), Type.Null()]), secret_set: Type.Boolean() })),
        },
      },
    },
    async (request) => ok(await getDefaultEndpoint(deps, merchantScope(request))),
  );

  app.post(
    '/v1/webhook-endpoint/rotate-secret',
    {
      config: { auth: 'key', errors: [409] },
      schema: {
        tags: ['webhooks'],
        summary: "Rotate the default endpoint's signing secret of the caller's mode; the new one is shown only here",
        description:
          'Both secrets sign during the grace period (webhook-signature: v1,<new> v1,<old>); X-Service-Signature uses the new one. 409 WEBHOOK_ENDPOINT_NOT_SET when a sandbox caller has no default endpoint.',
        body: RotateBody,
        response: { 200: Envelope(SecretShownOnce) },
      },
      preValidation: optionalBody,
    },
    async (request) => ok(await rotateDefaultSecret(deps, merchantScope(request), request.body.grace_period_seconds)),
  );

  app.post(
    '/v1/webhook-endpoints',
    {
      config: { auth: 'key', errors: [409, 'WEBHOOK_URL_FORBIDDEN'] },
      schema: {
        tags: ['webhooks'],
        summary: "Create a webhook endpoint in the caller's mode; returns its signing secret once",
        description: `At most ${MAX_ENDPOINTS_PER_MODE} endpoints per mode (409 WEBHOOK_ENDPOINT_LIMIT). Live endpoints must resolve to public addresses; sandbox ones may also be loopback (400 WEBHOOK_URL_FORBIDDEN). ${ENDPOINT_NOTE}`,
        body: CreateEndpointBody,
        response: { 201: Envelope(EndpointWithSecretSchema) },
      },
    },
    async (request, reply) => {
      const created = await createEndpoint(deps, merchantScope(request), request.body);
      return reply.code(201).send(ok(created));
    },
  );

  app.get(
    '/v1/webhook-endpoints',
    {
      config: { auth: 'key' },
      schema: {
        tags: ['webhooks'],
        summary: "The caller's mode's webhook endpoints, oldest first (never their secrets)",
        description: ENDPOINT_NOTE,
        response: { 200: Envelope(Type.Array(EndpointSchema)) },
      },
    },
    async (request) => ok(await listEndpoints(deps, merchantScope(request))),
  );

  app.get(
    '/v1/webhook-endpoints/:id',
    {
      config: { auth: 'key', errors: [404] },
      schema: {
        tags: ['webhooks'],
        summary: 'One webhook endpoint (never its secret)',
        description: ENDPOINT_NOTE,
        params: UuidParams,
        response: { 200: Envelope(EndpointSchema) },
      },
    },
    async (request) => ok(await getEndpointById(deps, merchantScope(request), request.params.id)),
  );

  app.patch(
    '/v1/webhook-endpoints/:id',
    {
      config: { auth: 'key', errors: [404, 'WEBHOOK_URL_FORBIDDEN'] },
      schema: {
        tags: ['webhooks'],
        summary: "Change a webhook endpoint's URL, description, events or disabled flag",
        description: `A disabled endpoint gets no new events; its queued deliveries wait until it is enabled again. ${ENDPOINT_NOTE}`,
        params: UuidParams,
        body: UpdateEndpointBody,
        response: { 200: Envelope(EndpointSchema) },
      },
    },
    async (request) => ok(await updateEndpoint(deps, merchantScope(request), request.params.id, request.body)),
  );

  app.delete(
    '/v1/webhook-endpoints/:id',
    {
      config: { auth: 'key', errors: [404] },
      schema: {
        tags: ['webhooks'],
        summary: 'Delete a webhook endpoint; its pending deliveries are skipped, its history stays',
        description: ENDPOINT_NOTE,
        params: UuidParams,
        response: { 200: Envelope(Type.Object({ id: Type.String(), deleted: Type.Literal(true) })) },
      },
    },
    async (request) => ok(await deleteEndpoint(deps, merchantScope(request), request.params.id)),
  );

  app.post(
    '/v1/webhook-endpoints/:id/rotate-secret',
    {
      config: { auth: 'key', errors: [404] },
      schema: {
        tags: ['webhooks'],
        summary: "Rotate an endpoint's signing secret with overlap; the new one is shown only here",
        description: `Both secrets sign during the grace period (webhook-signature: v1,<new> v1,<old>); X-Service-Signature uses the new one. ${ENDPOINT_NOTE}`,
        params: UuidParams,
        body: RotateBody,
        response: { 200: Envelope(EndpointWithSecretSchema) },
      },
      preValidation: optionalBody,
    },
    async (request) =>
      ok(
        await rotateEndpointSecret(deps, merchantScope(request), request.params.id, request.body.grace_period_seconds),
      ),
  );

  app.get(
    '/v1/events',
    {
      config: { auth: 'key' },
      schema: {
        tags: ['webhooks'],
        summary: "Events of the last 30 days, newest first (the key's mode only)",
        querystring: ListQuery({
          type: Type.Optional(
            Type.String({ minLength: 1, maxLength: 100, description: 'Event kind, e.g. payment.completed' }),
          ),
          resource_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          delivered: Type.Optional(Type.Boolean({ description: 'true: delivered; false: not (yet) delivered' })),
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
        querystring: ListQuery({
          status: Type.Optional(CsvEnum(DELIVERY_STATUSES, 'Delivery status')),
          event_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          endpoint_id: Type.Optional(Type.String({ format: 'uuid' })),
        }),
        response: { 200: Page(DeliverySchema) },
      },
    },
    async (request) => listDeliveries(deps, merchantScope(request), splitCsv(request.query, 'status')),
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
      config: { auth: 'key', errors: [404, 409] },
      schema: {
        tags: ['webhooks'],
        summary: 'Re-queue every delivery that failed (or found no endpoint) since a time, optionally of one endpoint',
        body: Type.Object(
          { since: Type.String({ format: 'date-time' }), endpoint_id: Type.Optional(Type.String({ format: 'uuid' })) },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(Type.Object({ requeued: Type.Integer(), since: Timestamp })) },
      },
    },
    async (request) =>
      ok(await recoverSince(deps, merchantScope(request), request.body.since, request.body.endpoint_id)),
  );
};
