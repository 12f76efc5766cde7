import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { created, Envelope, MinorUnits, ok, Timestamp } from '../../http/schemas.ts';
import { TransferSchema, VerificationSchema } from './schema.ts';
import { LEDGER_BATCH_MAX, type Ledger, type TransferCommand } from './port.ts';

const AccountName = Type.String({
  minLength: 3,
  maxLength: 220,
  pattern: '^(live|sandbox):[A-Za-z0-9_.:-]{1,200}$',
  description: 'Account name, prefixed by its mode',
});

const TransferBody = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 255 }),
    kind: Type.Union([Type.Literal('mint'), Type.Literal('burn'), Type.Literal('transfer')]),
    debit_account: AccountName,
    credit_account: AccountName,
    amount_micro_pay: MinorUnits('Amount in micro-PAY', 1),
    memo: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

const BatchItemSchema = Type.Union([
  Type.Object({ ok: Type.Literal(true), transfer: TransferSchema }),
  Type.Object({
    ok: Type.Literal(false),
    error: Type.Object({
      code: Type.Union([
        Type.Literal('LEDGER_INSUFFICIENT_FUNDS'),
        Type.Literal('LEDGER_IDEMPOTENCY_CONFLICT'),
        Type.Literal('VALIDATION_ERROR'),
      ]),
      message: Type.String(),
    }),
  }),
]);

/**
 * The ledger service's own HTTP API (`ROLES=ledger`), served on the gateway's Fastify server under
 * `/internal/ledger/*` with the internal service token. The HTTP adapter is its only client.
 */
export const ledgerServiceRoutes: FastifyPluginAsyncTypebox<{ ledger: Ledger }> = async (app, { ledger }) => {
  app.post(
    '/internal/ledger/transfers',
    {
      config: { auth: 'internal', errors: [409] },
      schema: {
        tags: ['ledger'],
        summary: 'Apply a mint, burn or transfer (idempotent by key)',
        body: TransferBody,
        response: { 200: Envelope(TransferSchema), 201: Envelope(TransferSchema) },
      },
    },
    async (request, reply) => {
      const result = await ledger.transfer(request.body);
      reply.status(result.replayed ? 200 : 201);
      return ok(result);
    },
  );

  app.post(
    '/internal/ledger/transfers/batch',
    {
      config: { auth: 'internal' },
      schema: {
        tags: ['ledger'],
        summary: 'Apply many independent transfers in one database transaction, each with its own result',
        description:
          'Items apply in order; a refused or malformed item (LEDGER_INSUFFICIENT_FUNDS, LEDGER_IDEMPOTENCY_CONFLICT, VALIDATION_ERROR in its own result) writes nothing and does not stop the others. 200 with one result per item.',
        body: Type.Object(
          {
            transfers: Type.Array(Type.Object({}, { additionalProperties: true }), {
              minItems: 1,
              maxItems: LEDGER_BATCH_MAX,
            }),
          },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(Type.Object({ results: Type.Array(BatchItemSchema) })) },
      },
    },
    async (request) =>
      ok({ results: await ledger.transferBatch(request.body.transfers as unknown as TransferCommand[]) }),
  );

  app.post(
    '/internal/ledger/transactions',
    {
      config: { auth: 'internal', errors: [409] },
      schema: {
        tags: ['ledger'],
        summary: 'Apply several postings atomically: all or none (each posting idempotent by its key)',
        body: Type.Object(
          { postings: Type.Array(TransferBody, { minItems: 1, maxItems: LEDGER_BATCH_MAX }) },
          { additionalProperties: false },
        ),
        response: { 201: Envelope(Type.Object({ transfers: Type.Array(TransferSchema) })) },
      },
    },
    async (request, reply) => created(reply, { transfers: await ledger.transferAll(request.body.postings) }),
  );

  app.post(
    '/internal/ledger/balances',
    {
      config: { auth: 'internal' },
      schema: {
        tags: ['ledger'],
        summary: 'Balances of accounts (null for an account never used)',
        body: Type.Object(
          { accounts: Type.Array(AccountName, { minItems: 1, maxItems: 100 }) },
          { additionalProperties: false },
        ),
        response: {
          200: Envelope(
            Type.Object({ balances: Type.Record(Type.String(), Type.Union([Type.Integer(), Type.Null()])) }),
          ),
        },
      },
    },
    async (request) => {
      const balances = await ledger.balances(request.body.accounts);
      return ok({ balances: Object.fromEntries(balances) });
    },
  );

  app.post(
    '/internal/ledger/credited',
    {
      config: { auth: 'internal' },
      schema: {
        tags: ['ledger'],
        summary: 'Sum credited to an account since a time',
        body: Type.Object({ account: AccountName, since: Timestamp }, { additionalProperties: false }),
        response: { 200: Envelope(Type.Object({ credited_micro_pay: Type.Integer() })) },
      },
    },
    async (request) =>
      ok({ credited_micro_pay: await ledger.creditedSince(request.body.account, new Date(request.body.since)) }),
  );

  app.get(
    '/internal/ledger/verify',
    {
      config: { auth: 'internal' },
      schema: {
        tags: ['ledger'],
        summary: 'Check the ledger invariants',
        response: { 200: Envelope(VerificationSchema) },
      },
    },
    async () => ok(await ledger.verify()),
  );
};
