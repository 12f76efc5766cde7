import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Envelope, ok, Timestamp, UuidParams } from '../../http/schemas.ts';
import { createMerchant, createSession, getMerchant, issueToken, type MerchantsDeps } from './service.ts';

const HttpUrl = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 });

export const merchantsAdminRoutes: FastifyPluginAsyncTypebox<{ deps: MerchantsDeps }> = async (app, { deps }) => {
  app.get(
    '/v1/merchants/me',
    {
      config: { auth: 'merchant', errors: [404] },
      schema: {
        tags: ['merchants'],
        summary: 'Who the merchant JWT or dashboard session belongs to',
        response: { 200: Envelope(Type.Object({ merchant_id: Type.String(), name: Type.String(), user_id: Type.String(), via: Type.Union([Type.Literal('jwt'), Type.Literal('session')]) })) },
      },
    },
    async (request) => {
      const principal = request.principal;
      if (principal.kind !== 'merchant') throw new Error('merchant route without a merchant principal');
      const merchant = await getMerchant(deps, principal.merchant_id);
      return ok({ merchant_id: merchant.id, name: merchant.name, user_id: principal.user_id, via: principal.via });
    },
  );

  app.post(
    '/admin/merchants',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Create a merchant with live, test and sandbox keys, a webhook secret and a JWT (shown only here)',
        description:
          'The webhook secret belongs to the live default webhook endpoint: created now when webhook_url is given (which must resolve to a public address: 400 WEBHOOK_URL_FORBIDDEN), else on the first live PUT /v1/webhook-endpoint.',
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), webhook_url: Type.Optional(HttpUrl) }, { additionalProperties: false }),
        response: {
          201: Envelope(
            Type.Object({
              merchant: Type.Object({ id: Type.String(), name: Type.String(), webhook_url: Type.Union([Type.String(), Type.Null()]), created_at: Timestamp }),
              api_keys: Type.Object({ live: Type.String(), test: Type.String(), sandbox: Type.String() }),
              webhook_secret: Type.String(),
              jwt: Type.String(),
            }),
          ),
        },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return ok(await createMerchant(deps, request.body));
    },
  );

  app.post(
    '/admin/merchants/:id/tokens',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Issue a merchant JWT (HS256) for the sell-order, buy-order, dispute and balance routes',
        params: UuidParams,
        body: Type.Optional(
          Type.Object(
            { user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), expires_in_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 365 * 24 * 3600 })) },
            { additionalProperties: false },
          ),
        ),
        response: { 201: Envelope(Type.Object({ jwt: Type.String(), expires_at: Timestamp })) },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return ok(await issueToken(deps, request.params.id, request.body ?? {}));
    },
  );

  app.post(
    '/admin/merchants/:id/sessions',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Open a dashboard session (cookie `mpay_session`) for a merchant user',
        params: UuidParams,
        body: Type.Object(
          { user_id: Type.String({ minLength: 1, maxLength: 200 }), expires_in_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 7 * 24 * 3600 })) },
          { additionalProperties: false },
        ),
        response: { 201: Envelope(Type.Object({ session_token: Type.String(), cookie: Type.String(), expires_at: Timestamp })) },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return ok(await createSession(deps, request.params.id, request.body));
    },
  );
};
