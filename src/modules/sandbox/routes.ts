import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../../db/database.ts';
import { merchantScope } from '../../http/auth.ts';
import { idempotentWrite } from '../../http/idempotency.ts';
import { Envelope, ok } from '../../http/schemas.ts';
import { CURRENCIES, PAYMENT_METHODS } from '../../lib/money.ts';
import { SYNTHETIC_EVENT_TYPES } from './event-types.ts';
import { emitSyntheticEvent } from './events.ts';
import { DEFAULT_AMOUNT_MINOR, DEFAULT_CURRENCY, SCENARIOS, simulatePayment, type SandboxDeps } from './service.ts';

const SimulateBody = Type.Object(
  {
    scenario: Type.Union(SCENARIOS.map((s) => Type.Literal(s))),
    amount: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description: `Minor units; default ${DEFAULT_AMOUNT_MINOR}`,
      }),
    ),
    currency: Type.Optional(
      Type.Union(
        CURRENCIES.map((c) => Type.Literal(c)),
        { description: `Default ${DEFAULT_CURRENCY}` },
      ),
    ),
    payment_method: Type.Optional(
      Type.Union(
        PAYMENT_METHODS.map((m) => Type.Literal(m)),
        { description: "Default: the currency's first method" },
      ),
    ),
    order_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: 'Default: a generated sbx_order_… id' }),
    ),
    return_url: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 })),
  },
  { additionalProperties: false },
);

export const sandboxRoutes: FastifyPluginAsyncTypebox<{ deps: SandboxDeps & { db: Db } }> = async (app, { deps }) => {
  app.post(
    '/v1/sandbox/payments/simulate',
    {
      config: { auth: 'key', mode: 'sandbox_only', errors: [403, 409, 502] },
      schema: {
        tags: ['sandbox'],
        summary: 'Play a payment lifecycle scenario; the response is the terminal view, signed webhooks follow',
        description:
          'Test or sandbox key only (a live key is 403 SANDBOX_ONLY). Optional `Idempotency-Key`. Sandbox rate limit. A completion posts on the sandbox ledger; while the ledger is unreachable it is 502 LEDGER_UNAVAILABLE and nothing is recorded.',
        body: SimulateBody,
        response: { 201: Envelope(Type.Object({ scenario: Type.String(), payment: Type.Ref('Payment') })) },
      },
    },
    async (request, reply) =>
      idempotentWrite(deps, request, reply, { required: false, status: 201 }, (trx, scope) =>
        simulatePayment(deps, trx, scope, request.body),
      ),
  );

  app.post(
    '/v1/sandbox/events',
    {
      config: { auth: 'key', mode: 'sandbox_only', errors: [403] },
      schema: {
        tags: ['sandbox'],
        summary: 'Emit a sandbox event of a kind the payment scenarios do not produce; its signed webhook follows',
        description:
          'Test or sandbox key only (a live key is 403 SANDBOX_ONLY). The event describes a synthetic resource (a fresh UUID, no row behind it) shaped like the real one, and is written to the outbox and delivered to the sandbox endpoints exactly as a real event. Payment events come from POST /v1/sandbox/payments/simulate.',
        body: Type.Object(
          { type: Type.Union(SYNTHETIC_EVENT_TYPES.map((type) => Type.Literal(type))) },
          { additionalProperties: false },
        ),
        response: {
          201: Envelope(
            Type.Object({
              id: Type.String({ description: 'evt_… (the webhook-id of the delivery)' }),
              type: Type.String(),
              event: Type.Object({}, { additionalProperties: true, description: 'The envelope as delivered' }),
            }),
          ),
        },
      },
    },
    async (request, reply) => {
      const scope = merchantScope(request);
      const envelope = await deps.db
        .transaction()
        .execute((trx) => emitSyntheticEvent(deps, trx, scope, request.body.type));
      return reply.code(201).send(ok({ id: envelope.id, type: envelope.type, event: envelope }));
    },
  );
};
