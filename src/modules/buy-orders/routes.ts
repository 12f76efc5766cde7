import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { merchantScope } from '../../http/auth.ts';
import { idempotent } from '../../http/idempotency.ts';
import { CsvEnum, Cursor, Envelope, Limit, MinorUnits, NullableTimestamp, ok, Page, parseCsv, Timestamp, UuidParams } from '../../http/schemas.ts';
import { CURRENCIES } from '../../lib/money.ts';
import { BUY_ORDER_STATUSES, cancelBuyOrder, createBuyOrder, getBuyOrder, listBuyOrders, type BuyOrdersDeps } from './service.ts';
import type { BuyOrderStatus } from './tables.ts';

const Fiat = Type.Union(CURRENCIES.map((c) => Type.Literal(c)));

export const BuyOrderSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  merchant_id: Type.String(),
  is_sandbox: Type.Boolean(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('matched'), Type.Literal('cancelled'), Type.Literal('expired')]),
  amount_micro_pay: Type.Integer({ description: 'PAY to acquire, in micro-PAY; minted to your available account on match' }),
  fiat_currency: Type.String(),
  fiat_amount: Type.Integer({ description: 'Fiat locked against the PAY, in minor units; fiat_amount / amount_micro_pay is the highest price this order pays' }),
  filled_micro_pay: Type.Integer({ description: 'PAY filled so far (minted to you); `pending` while below amount_micro_pay, `matched` when equal' }),
  filled_fiat_amount: Type.Integer({ description: 'Fiat owed for the filled part, at the sell orders\' prices (at or below yours)' }),
  expires_at: Timestamp,
  matched_sell_order_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  mint_transfer_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
  matched_at: NullableTimestamp,
  cancelled_at: NullableTimestamp,
  expired_at: NullableTimestamp,
});

const IdempotencyHeader = Type.Object({ 'idempotency-key': Type.Optional(Type.String({ description: 'A UUID; required' })) });

export const buyOrderRoutes: FastifyPluginAsyncTypebox<{ deps: BuyOrdersDeps }> = async (app, { deps }) => {
  app.get(
    '/v1/merchant-buy-orders',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['buy-orders'],
        summary: 'List your buy orders, newest first',
        querystring: Type.Object({
          status: Type.Optional(CsvEnum(BUY_ORDER_STATUSES, 'Status filter')),
          fiat_currency: Type.Optional(Fiat),
          created_after: Type.Optional(Type.String({ format: 'date-time' })),
          created_before: Type.Optional(Type.String({ format: 'date-time' })),
          cursor: Type.Optional(Cursor),
          limit: Limit,
        }),
        response: { 200: Page(BuyOrderSchema) },
      },
    },
    async (request) => listBuyOrders(deps, merchantScope(request), { ...request.query, status: parseCsv<BuyOrderStatus>(request.query.status) }),
  );

  app.post(
    '/v1/merchant-buy-orders',
    {
      config: { auth: 'merchant', errors: [409] },
      schema: {
        tags: ['buy-orders'],
        summary: 'Buy PAY: lock fiat against an amount of PAY; the matcher pairs it FIFO with a sell order of the same currency and amount',
        headers: IdempotencyHeader,
        body: Type.Object(
          {
            amount_micro_pay: MinorUnits('PAY to acquire, in micro-PAY', 1),
            fiat_currency: Fiat,
            fiat_amount: MinorUnits('Fiat locked, in minor units', 1),
          },
          { additionalProperties: false },
        ),
        response: { 201: Envelope(BuyOrderSchema) },
      },
    },
    async (request, reply) => {
      const scope = merchantScope(request);
      return idempotent(deps, request, reply, { required: true }, async (trx) => ({ status: 201, body: ok(await createBuyOrder(deps, trx, scope, request.body)) }));
    },
  );

  app.get(
    '/v1/merchant-buy-orders/:id',
    {
      config: { auth: 'merchant', errors: [403, 404] },
      schema: { tags: ['buy-orders'], summary: 'Read a buy order', params: UuidParams, response: { 200: Envelope(BuyOrderSchema) } },
    },
    async (request) => ok(await getBuyOrder(deps, merchantScope(request), request.params.id)),
  );

  app.post(
    '/v1/merchant-buy-orders/:id/cancel',
    {
      config: { auth: 'merchant', errors: [403, 404, 409] },
      schema: {
        tags: ['buy-orders'],
        summary: 'Cancel a pending buy order (409 BUY_ORDER_BAD_STATE once matched)',
        headers: IdempotencyHeader,
        params: UuidParams,
        response: { 200: Envelope(BuyOrderSchema) },
      },
    },
    async (request, reply) => {
      const scope = merchantScope(request);
      return idempotent(deps, request, reply, { required: true }, async (trx) => ({ status: 200, body: ok(await cancelBuyOrder(deps, trx, scope, request.params.id)) }));
    },
  );
};
