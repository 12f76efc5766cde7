import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../../db/database.ts';
import { merchantScope } from '../../http/auth.ts';
import { created, Envelope, MinorUnits, ok, Timestamp, UuidParams } from '../../http/schemas.ts';
import type { Clock } from '../../lib/clock.ts';
import { CURRENCIES, PAYMENT_METHODS } from '../../lib/money.ts';
import { CreatedSellerSchema, SellerKeySchema, SellerSchema } from './schema.ts';
import { createSeller, fundSeller, rateSnapshot, rollSellerKey, type SellerFundingPort } from './service.ts';
import type { Ledger } from '../ledger/port.ts';
import { adminActor } from '../../http/auth.ts';

const CurrencySchema = Type.Union(CURRENCIES.map((c) => Type.Literal(c)));
const MethodSchema = Type.Union(PAYMENT_METHODS.map((m) => Type.Literal(m)));
const RateString = Type.String({
  pattern: '^\\d{1,12}(\\.\\d{1,8})?$',
  description: 'Fiat major units per 1 PAY, as a decimal string',
});

export const RateSnapshotSchema = Type.Object({
  currency: Type.String(),
  payment_method: Type.String(),
  best_rate: Type.Union([Type.String(), Type.Null()], { description: 'Fewest fiat units per PAY among live offers' }),
  available_liquidity_minor: Type.Integer(),
  available_liquidity_decimal: Type.String(),
  offers: Type.Integer(),
  as_of: Timestamp,
});

export const liquidityRoutes: FastifyPluginAsyncTypebox<{
  db: Db;
  clock: Clock;
  funding?: SellerFundingPort;
  ledger: Ledger;
}> = async (app, { db, clock, funding, ledger }) => {
  app.post(
    '/admin/sellers/:id/funding',
    {
      config: { auth: 'admin', errors: [404, 502] },
      schema: {
        tags: ['admin'],
        summary: "Fund a seller's PAY and put a suspended seller back into matching",
        params: UuidParams,
        headers: Type.Object({
          'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[\\x21-\\x7e]+$' })),
        }),
        body: Type.Object(
          { amount_micro_pay: MinorUnits('PAY to mint into the seller account, micro-PAY', 1) },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(Type.Object({ ...SellerSchema.properties, balance_micro_pay: Type.Integer() })) },
      },
    },
    async (request) =>
      ok(
        await fundSeller(
          { db, clock, ledger },
          adminActor(request),
          request.params.id,
          request.body,
          request.headers['idempotency-key'],
        ),
      ),
  );

  app.get(
    '/v1/rates',
    {
      config: { auth: 'key' },
      schema: {
        tags: ['rates'],
        summary: 'Best rate and available liquidity for a currency and payment method',
        querystring: Type.Object({ currency: CurrencySchema, payment_method: MethodSchema }),
        response: { 200: Envelope(RateSnapshotSchema) },
      },
    },
    async (request) => {
      const { is_sandbox } = merchantScope(request);
      return ok(
        await rateSnapshot(db, clock, {
          is_sandbox,
          currency: request.query.currency,
          payment_method: request.query.payment_method,
        }),
      );
    },
  );

  app.post(
    '/admin/sellers',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Add a live seller offer with liquidity',
        body: Type.Object(
          {
            currency: CurrencySchema,
            payment_method: MethodSchema,
            display_name: Type.String({ minLength: 1, maxLength: 200 }),
            liquidity_minor: MinorUnits('Fiat liquidity in minor units', 1),
            rate: RateString,
            promptpay_id: Type.Optional(Type.String({ pattern: '^(0\\d{9}|\\d{13}|\\d{15})$' })),
            payid: Type.Optional(Type.String({ minLength: 3, maxLength: 254 })),
            bank: Type.Optional(
              Type.Object(
                {
                  code: Type.String({ minLength: 1, maxLength: 16 }),
                  account_number: Type.String({ minLength: 4, maxLength: 34 }),
                  account_name: Type.String({ minLength: 1, maxLength: 200 }),
                },
                { additionalProperties: false },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Envelope(CreatedSellerSchema),
        },
      },
    },
    async (request, reply) => created(reply, await createSeller(db, clock, request.body, funding)),
  );

  app.post(
    '/admin/sellers/:id/keys',
    {
      config: { auth: 'admin', errors: [404] },
      schema: {
        tags: ['admin'],
        summary: "Roll a seller's key: a new sel_live_… key, shown once; the old one stops working (audited)",
        params: UuidParams,
        response: { 201: Envelope(SellerKeySchema) },
      },
    },
    async (request, reply) => created(reply, await rollSellerKey(db, clock, adminActor(request), request.params.id)),
  );
};
