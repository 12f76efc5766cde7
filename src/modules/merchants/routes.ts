import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { created, Envelope, ok, Timestamp, UuidParams } from '../../http/schemas.ts';
import {
  createMerchant,
  createSession,
  exchangeApiKey,
  getMerchant,
  issueToken,
  KEY_TOKEN_DEFAULT_SECONDS,
  KEY_TOKEN_MAX_SECONDS,
  revokeTokens,
  rollApiKey,
  type MerchantsDeps,
} from './service.ts';

const Mode = Type.Union([Type.Literal('live'), Type.Literal('sandbox')], {
  description: 'Which rows the credential reaches: live (default) or sandbox',
});

const HttpUrl = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 });

const AccessToken = Type.Object({
  access_token: Type.String({ description: 'The merchant JWT: send it as `Authorization: Bearer <access_token>`' }),
  merchant_id: Type.String({ description: 'The merchant the key belongs to (the balance route takes it)' }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'Seconds until the token ends' }),
  expires_at: Timestamp,
  mode: Mode,
});

export const merchantsAdminRoutes: FastifyPluginAsyncTypebox<{ deps: MerchantsDeps }> = async (app, { deps }) => {
  app.post(
    '/v1/auth/token',
    {
      config: { auth: 'key' },
      schema: {
        tags: ['auth'],
        summary: "Trade a secret API key for a short-lived merchant JWT in the key's mode",
        description:
          'OAuth 2.0 client credentials: authenticate with a secret API key (X-API-Key or `Authorization: Bearer`). The JWT ' +
          "reaches every merchant route (sell and buy orders, disputes, balance) in the key's mode: a live key gives a `live` " +
          'token, a test or sandbox key a `sandbox` one. It ends at `expires_in`, when the key is rolled or revoked, or when the ' +
          "merchant's tokens are revoked. A JWT, a session or any other credential cannot be traded (401). The token fields " +
          'also stand at the top level (RFC 6749 section 5.1), so OAuth client libraries read them as they are.',
        body: Type.Object(
          {
            grant_type: Type.Optional(Type.Literal('client_credentials')),
            ttl_seconds: Type.Optional(
              Type.Integer({
                minimum: 60,
                maximum: KEY_TOKEN_MAX_SECONDS,
                description: `Lifetime in seconds (default ${KEY_TOKEN_DEFAULT_SECONDS})`,
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ success: Type.Literal(true), data: AccessToken, ...AccessToken.properties }) },
      },
      // Every field is optional: a POST with no body at all is the plain exchange.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const principal = request.principal;
      if (principal.kind !== 'key') throw new Error('key route without a key principal');
      const token = await exchangeApiKey(deps, principal, request.body);
      // RFC 6749 section 5.1: a token response is never cached.
      reply.header('Cache-Control', 'no-store');
      return { success: true as const, data: token, ...token };
    },
  );

  app.get(
    '/v1/merchants/me',
    {
      config: { auth: 'merchant', errors: [404] },
      schema: {
        tags: ['merchants'],
        summary: 'Who the merchant JWT or dashboard session belongs to',
        response: {
          200: Envelope(
            Type.Object({
              merchant_id: Type.String(),
              name: Type.String(),
              user_id: Type.String(),
              via: Type.Union([Type.Literal('jwt'), Type.Literal('session')]),
            }),
          ),
        },
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
      config: { auth: 'admin', errors: ['WEBHOOK_URL_FORBIDDEN'] },
      schema: {
        tags: ['admin'],
        summary: 'Create a merchant with live, test and sandbox keys, a webhook secret and a JWT (shown only here)',
        description:
          'The webhook secret belongs to the live default webhook endpoint: created now when webhook_url is given (which must resolve to a public address: 400 WEBHOOK_URL_FORBIDDEN), else on the first live PUT /v1/webhook-endpoint.',
        body: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 200 }), webhook_url: Type.Optional(HttpUrl) },
          { additionalProperties: false },
        ),
        response: {
          201: Envelope(
            Type.Object({
              merchant: Type.Object({
                id: Type.String(),
                name: Type.String(),
                webhook_url: Type.Union([Type.String(), Type.Null()]),
                created_at: Timestamp,
              }),
              api_keys: Type.Object({ live: Type.String(), test: Type.String(), sandbox: Type.String() }),
              webhook_secret: Type.String(),
              jwt: Type.String(),
            }),
          ),
        },
      },
    },
    async (request, reply) => created(reply, await createMerchant(deps, request.body)),
  );

  app.post(
    '/admin/merchants/:id/tokens',
    {
      config: { auth: 'admin', errors: [404] },
      schema: {
        tags: ['admin'],
        summary:
          'Issue a merchant JWT (HS256) for the sell-order, buy-order, dispute and balance routes, live or sandbox',
        description:
          'The JWT carries `exp` and a `mode` claim; its lifetime (`ttl_seconds`, default and maximum JWT_MAX_LIFETIME_SECONDS) above the cap is 400.',
        params: UuidParams,
        body: Type.Optional(
          Type.Object(
            {
              user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
              mode: Type.Optional(Mode),
              ttl_seconds: Type.Optional(
                Type.Integer({
                  minimum: 60,
                  maximum: 365 * 24 * 3600,
                  description: 'Lifetime in seconds; at most JWT_MAX_LIFETIME_SECONDS',
                }),
              ),
              expires_in_seconds: Type.Optional(
                Type.Integer({ minimum: 60, maximum: 365 * 24 * 3600, description: 'Older name of ttl_seconds' }),
              ),
            },
            { additionalProperties: false },
          ),
        ),
        response: { 201: Envelope(Type.Object({ jwt: Type.String(), mode: Mode, expires_at: Timestamp })) },
      },
    },
    async (request, reply) => created(reply, await issueToken(deps, request.params.id, request.body ?? {})),
  );

  app.post(
    '/admin/merchants/:id/api-keys/roll',
    {
      config: { auth: 'admin', errors: [404] },
      schema: {
        tags: ['admin'],
        summary: 'Roll a merchant API key: revoke the current key of a kind and issue a new one (shown only here)',
        description:
          'The old key stops working when the roll commits, in every api process (their credential caches check the credential epoch the roll moves).',
        params: UuidParams,
        body: Type.Object(
          { kind: Type.Union([Type.Literal('live'), Type.Literal('test'), Type.Literal('sandbox')]) },
          { additionalProperties: false },
        ),
        response: {
          201: Envelope(
            Type.Object({ kind: Type.String(), key: Type.String(), key_hint: Type.String(), revoked: Type.Integer() }),
          ),
        },
      },
    },
    async (request, reply) => created(reply, await rollApiKey(deps, request.params.id, request.body.kind)),
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
          {
            user_id: Type.String({ minLength: 1, maxLength: 200 }),
            mode: Type.Optional(Mode),
            expires_in_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 7 * 24 * 3600 })),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Envelope(
            Type.Object({ session_token: Type.String(), cookie: Type.String(), mode: Mode, expires_at: Timestamp }),
          ),
        },
      },
    },
    async (request, reply) => created(reply, await createSession(deps, request.params.id, request.body)),
  );

  app.post(
    '/admin/merchants/:id/tokens/revoke',
    {
      config: { auth: 'admin', errors: [404] },
      schema: {
        tags: ['admin'],
        summary:
          "Revoke every merchant JWT issued and every dashboard session opened before now (the merchant's API keys are not affected)",
        params: UuidParams,
        response: { 200: Envelope(Type.Object({ merchant_id: Type.String(), tokens_not_before: Timestamp })) },
      },
    },
    async (request) => ok(await revokeTokens(deps, request.params.id)),
  );
};
