import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { merchantScope } from '../../http/auth.ts';
import { IdempotencyKeyHeader, idempotentWrite, storedIdempotentResponse } from '../../http/idempotency.ts';
import {
  CsvEnum,
  Envelope,
  ListQuery,
  MinorUnits,
  ok,
  Page,
  splitCsv,
  Timestamp,
  UUID_PATTERN,
  UuidParams,
} from '../../http/schemas.ts';
import { CURRENCIES } from '../../lib/money.ts';
import { RECEIPT_CONTENT_TYPES } from '../validators/receipt.ts';
import { PayoutDestinationInput, PayoutDestinationSchema } from '../reference/payout-destinations.ts';
import { getDefaultPayoutDestination, setDefaultPayoutDestination } from './destinations.ts';
import { SellOrderSchema } from './present.ts';
import {
  applyCashLeg,
  cancelSellOrder,
  checkCashLegEvidence,
  createSellOrder,
  getSellOrder,
  listSellOrders,
  type SellOrdersDeps,
} from './service.ts';
import { SELL_ORDER_STATUSES } from './state.ts';
import { idempotencyKeyMalformed, idempotencyKeyRequired } from '../../http/http-errors.ts';

const Fiat = Type.Union(CURRENCIES.map((c) => Type.Literal(c)));

export { SellOrderSchema } from './present.ts';

const CreateBody = Type.Object(
  {
    amount_micro_pay: MinorUnits('PAY to sell, in micro-PAY (1 PAY = 1,000,000)', 1),
    currency: Type.Literal('PAY', { description: 'What is sold: always PAY' }),
    target_currency: Fiat,
    target_fiat_amount: MinorUnits(
      'Fiat the buyers pay you for the whole amount, in minor units of target_currency',
      1,
    ),
    payout_destination: Type.Optional({
      ...PayoutDestinationInput,
      description: 'Where the buyers pay you; optional when your default destination carries target_currency',
    }),
  },
  { additionalProperties: false },
);

const ConfirmBody = Type.Object(
  {
    receipt_base64: Type.String({
      minLength: 1,
      description: "The slip of the buyer's transfer that reached your payout destination (image or PDF), base64",
    }),
    content_type: Type.Union(RECEIPT_CONTENT_TYPES.map((type) => Type.Literal(type))),
    reference: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: "Your rail's transfer reference" }),
    ),
    buy_order_id: Type.Optional(
      Type.String({
        format: 'uuid',
        description:
          'The buy order whose transfer the slip shows (from `cash_leg.fills`); default: the oldest fill still without a verified transfer',
      }),
    ),
  },
  { additionalProperties: false },
);

function idempotencyKey(request: FastifyRequest): string | undefined {
  const raw = request.headers['idempotency-key'];
  return Array.isArray(raw) ? raw[0] : raw;
}

const DefaultDestination = Type.Object({ destination: PayoutDestinationSchema, updated_at: Timestamp });

export const sellOrderRoutes: FastifyPluginAsyncTypebox<{ deps: SellOrdersDeps }> = async (app, { deps }) => {
  app.get(
    '/v1/merchants/me/payout-destination',
    {
      config: { auth: 'merchant', errors: [404] },
      schema: {
        tags: ['sell-orders'],
        summary: 'Your default payout destination in this mode (404 when none is set)',
        response: { 200: Envelope(DefaultDestination) },
      },
    },
    async (request) => ok(await getDefaultPayoutDestination(deps, merchantScope(request))),
  );

  app.put(
    '/v1/merchants/me/payout-destination',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['sell-orders'],
        summary: 'Set your default payout destination: where buyers pay you for sell orders that name none',
        body: PayoutDestinationInput,
        response: { 200: Envelope(DefaultDestination) },
      },
    },
    async (request) => ok(await setDefaultPayoutDestination(deps, merchantScope(request), request.body)),
  );

  app.get(
    '/v1/merchant-sell-orders',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['sell-orders'],
        summary: 'List your sell orders, newest first',
        querystring: ListQuery({
          status: Type.Optional(CsvEnum(SELL_ORDER_STATUSES, 'Status filter')),
          currency: Type.Optional(Type.Literal('PAY')),
          target_currency: Type.Optional(Fiat),
          created_after: Type.Optional(Type.String({ format: 'date-time', description: 'created_at >= this' })),
          created_before: Type.Optional(Type.String({ format: 'date-time', description: 'created_at < this' })),
        }),
        response: { 200: Page(SellOrderSchema) },
      },
    },
    async (request) => listSellOrders(deps, merchantScope(request), splitCsv(request.query, 'status')),
  );

  app.post(
    '/v1/merchant-sell-orders',
    {
      config: { auth: 'merchant', errors: [409, 502] },
      schema: {
        tags: ['sell-orders'],
        summary:
          'Sell PAY for a fiat payout: reserves the PAY (409 SELL_ORDER_INSUFFICIENT_BALANCE when available is short)',
        headers: IdempotencyKeyHeader,
        body: CreateBody,
        response: { 201: Envelope(SellOrderSchema) },
      },
    },
    async (request, reply) =>
      idempotentWrite(deps, request, reply, { required: true, status: 201 }, (trx, scope) =>
        createSellOrder(deps, trx, scope, request.body, idempotencyKey(request)),
      ),
  );

  app.get(
    '/v1/merchant-sell-orders/:id',
    {
      config: { auth: 'merchant', errors: [403, 404] },
      schema: {
        tags: ['sell-orders'],
        summary: 'Read a sell order',
        params: UuidParams,
        response: { 200: Envelope(SellOrderSchema) },
      },
    },
    async (request) => ok(await getSellOrder(deps, merchantScope(request), request.params.id)),
  );

  app.post(
    '/v1/merchant-sell-orders/:id/confirm-cash-leg',
    {
      config: { auth: 'merchant', errors: [403, 404, 409, 502] },
      schema: {
        tags: ['sell-orders'],
        summary: "Confirm that the buyer's transfer reached your payout destination, with its slip",
        description:
          "The slip is checked against the fill's fiat_amount and your own payout destination. 200 with the sell order: `completed` (every fill's transfer verified; the reserved PAY burned), `cash_leg_in_flight` (the slip was not accepted, or other fills still wait for theirs; retry with a new Idempotency-Key) or `failed` (retries were exhausted). 502 SELL_ORDER_LEDGER_UNAVAILABLE rolls everything back and the retry costs no attempt.",
        headers: IdempotencyKeyHeader,
        params: UuidParams,
        body: ConfirmBody,
        response: { 200: Envelope(SellOrderSchema) },
      },
    },
    async (request, reply) => {
      const scope = merchantScope(request);
      const key = idempotencyKey(request);
      // A request the idempotency check will refuse (no key, not a UUID) never reaches the validator: same errors as idempotent().
      if (key === undefined) throw idempotencyKeyRequired();
      if (!new RegExp(UUID_PATTERN).test(key)) throw idempotencyKeyMalformed(true);
      // The idempotency outcome first: a replay or a conflicting reuse never spends a provider call.
      const stored = await storedIdempotentResponse(deps, request, key);
      if (stored) {
        reply.status(stored.status as 200).header('Idempotent-Replayed', 'true');
        return stored.body as Static<ReturnType<typeof Envelope<typeof SellOrderSchema>>>;
      }
      const evidence = await checkCashLegEvidence(deps, scope, request.params.id, request.body);
      return idempotentWrite(deps, request, reply, { required: true, status: 200 }, (trx) =>
        applyCashLeg(deps, trx, scope, request.params.id, request.body, evidence),
      );
    },
  );

  app.post(
    '/v1/merchant-sell-orders/:id/cancel',
    {
      config: { auth: 'merchant', errors: [403, 404, 409, 502] },
      schema: {
        tags: ['sell-orders'],
        summary: 'Cancel a pending sell order (failed, cancelled_by_merchant); the reserved PAY returns to available',
        headers: IdempotencyKeyHeader,
        params: UuidParams,
        response: { 200: Envelope(SellOrderSchema) },
      },
    },
    async (request, reply) =>
      idempotentWrite(deps, request, reply, { required: true, status: 200 }, (trx, scope) =>
        cancelSellOrder(deps, trx, scope, request.params.id),
      ),
  );
};
