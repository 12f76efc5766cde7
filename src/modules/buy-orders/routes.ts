import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { merchantScope } from '../../http/auth.ts';
import { IdempotencyKeyHeader, idempotentWrite } from '../../http/idempotency.ts';
import { PngResponse, sendPng } from '../../http/png.ts';
import { CsvEnum, Envelope, ListQuery, MinorUnits, ok, Page, splitCsv, UuidParams } from '../../http/schemas.ts';
import { CURRENCIES } from '../../lib/money.ts';
import { BuyOrderSchema } from './schema.ts';
import {
  BUY_ORDER_STATUSES,
  cancelBuyOrder,
  createBuyOrder,
  fillQrPng,
  getBuyOrder,
  listBuyOrders,
  type BuyOrdersDeps,
} from './service.ts';

const Fiat = Type.Union(CURRENCIES.map((c) => Type.Literal(c)));

export { BuyOrderSchema } from './schema.ts';

export const buyOrderRoutes: FastifyPluginAsyncTypebox<{ deps: BuyOrdersDeps }> = async (app, { deps }) => {
  app.get(
    '/v1/merchant-buy-orders',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['buy-orders'],
        summary: 'List your buy orders, newest first',
        querystring: ListQuery({
          status: Type.Optional(CsvEnum(BUY_ORDER_STATUSES, 'Status filter')),
          fiat_currency: Type.Optional(Fiat),
          created_after: Type.Optional(Type.String({ format: 'date-time' })),
          created_before: Type.Optional(Type.String({ format: 'date-time' })),
        }),
        response: { 200: Page(BuyOrderSchema) },
      },
    },
    async (request) => listBuyOrders(deps, merchantScope(request), splitCsv(request.query, 'status')),
  );

  app.post(
    '/v1/merchant-buy-orders',
    {
      config: { auth: 'merchant', errors: [409] },
      schema: {
        tags: ['buy-orders'],
        summary:
          "Buy PAY: the matcher fills it from other merchants' sell orders priced at or below yours; you then pay each seller per `fills`",
        headers: IdempotencyKeyHeader,
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
    async (request, reply) =>
      idempotentWrite(deps, request, reply, { required: true, status: 201 }, (trx, scope) =>
        createBuyOrder(deps, trx, scope, request.body),
      ),
  );

  app.get(
    '/v1/merchant-buy-orders/:id',
    {
      config: { auth: 'merchant', errors: [403, 404] },
      schema: {
        tags: ['buy-orders'],
        summary: 'Read a buy order, with whom to pay for each fill',
        params: UuidParams,
        response: { 200: Envelope(BuyOrderSchema) },
      },
    },
    async (request) => ok(await getBuyOrder(deps, merchantScope(request), request.params.id)),
  );

  app.get(
    '/v1/merchant-buy-orders/:id/fills/:n/qr.png',
    {
      config: { auth: 'merchant', errors: [403, 404] },
      schema: {
        tags: ['buy-orders'],
        summary:
          "PNG PromptPay QR of fill n: scan it to pay that seller exactly the fill's fiat_amount (404 when its rail has no QR)",
        params: Type.Object({
          id: UuidParams.properties.id,
          n: Type.Integer({ minimum: 1, maximum: 100_000, description: "The fill's number" }),
        }),
        ...PngResponse,
      },
    },
    async (request, reply) =>
      sendPng(reply, await fillQrPng(deps, merchantScope(request), request.params.id, request.params.n), 'private'),
  );

  app.post(
    '/v1/merchant-buy-orders/:id/cancel',
    {
      config: { auth: 'merchant', errors: [403, 404, 409] },
      schema: {
        tags: ['buy-orders'],
        summary: 'Cancel a pending buy order (409 BUY_ORDER_BAD_STATE once matched)',
        headers: IdempotencyKeyHeader,
        params: UuidParams,
        response: { 200: Envelope(BuyOrderSchema) },
      },
    },
    async (request, reply) =>
      idempotentWrite(deps, request, reply, { required: true, status: 200 }, (trx, scope) =>
        cancelBuyOrder(deps, trx, scope, request.params.id),
      ),
  );
};
