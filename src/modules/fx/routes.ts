import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { adminActor, merchantScope } from '../../http/auth.ts';
import { idempotentWrite } from '../../http/idempotency.ts';
import { CsvEnum, Envelope, ok, parseCsv, UuidParams } from '../../http/schemas.ts';
import { CURRENCIES } from '../../lib/money.ts';
import { QuoteLockSchema, ReferencePriceSchema } from './schema.ts';
import {
  createQuoteLock,
  FX_BASE,
  getQuoteLock,
  listReferencePrices,
  setReferencePrice,
  type FxDeps,
} from './service.ts';

const CurrencySchema = Type.Union(CURRENCIES.map((c) => Type.Literal(c)));
const Base = Type.Literal(FX_BASE, { description: 'Always PAY: prices are quote-currency major units per 1 PAY' });
const Price = Type.String({
  pattern: '^\\d{1,12}(\\.\\d{1,8})?$',
  description: 'Quote-currency major units per 1 PAY, a decimal string (at most 8 decimals)',
});

export const fxRoutes: FastifyPluginAsyncTypebox<{ deps: FxDeps }> = async (app, { deps }) => {
  app.get(
    '/v1/fx/reference-prices',
    {
      config: { auth: 'key', errors: [409] },
      schema: {
        tags: ['fx'],
        summary: 'Reference prices of PAY in fiat (PAY/USD is fixed at 1)',
        description: 'Asking for a quote currency that has no price is 409 FX_PRICE_UNAVAILABLE.',
        querystring: Type.Object({
          base: Type.Optional(Base),
          quote: Type.Optional(CsvEnum(CURRENCIES, 'Quote currencies')),
        }),
        response: { 200: Envelope(Type.Array(ReferencePriceSchema)) },
      },
    },
    async (request) => ok(await listReferencePrices(deps.db, parseCsv(request.query.quote))),
  );

  app.post(
    '/v1/fx/quote-locks',
    {
      config: { auth: 'key', errors: [409] },
      schema: {
        tags: ['fx'],
        summary:
          'Lock the current PAY reference price of a currency for FX_QUOTE_LOCK_SECONDS (default 30); pass its id to POST /v1/trades',
        description: 'Optional `Idempotency-Key`. A lock can be used by one trade, before it expires.',
        body: Type.Object({ currency: CurrencySchema, base: Type.Optional(Base) }, { additionalProperties: false }),
        response: { 201: Envelope(QuoteLockSchema) },
      },
    },
    async (request, reply) =>
      idempotentWrite(deps, request, reply, { required: false, status: 201 }, (trx, scope) =>
        createQuoteLock(deps, trx, scope, request.body),
      ),
  );

  app.get(
    '/v1/fx/quote-locks/:id',
    {
      config: { auth: 'key', errors: [404] },
      schema: {
        tags: ['fx'],
        summary: 'Read a quote lock (status active, used or expired)',
        params: UuidParams,
        response: { 200: Envelope(QuoteLockSchema) },
      },
    },
    async (request) => ok(await getQuoteLock(deps, merchantScope(request), request.params.id)),
  );

  app.put(
    '/admin/fx/reference-prices',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Set the reference price of PAY in a fiat currency (audited)',
        body: Type.Object({ base: Base, quote: CurrencySchema, price: Price }, { additionalProperties: false }),
        response: { 200: Envelope(ReferencePriceSchema) },
      },
    },
    async (request) => ok(await setReferencePrice(deps, adminActor(request), request.body)),
  );
};
