import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../../db/database.ts';
import { adminActor } from '../../http/auth.ts';
import { Envelope, MinorUnits, ok, UuidParams } from '../../http/schemas.ts';
import type { Clock } from '../../lib/clock.ts';
import { adjustMerchantLedger } from './adjustments.ts';
import type { Ledger } from './port.ts';
import { LedgerAdjustmentSchema, VerificationSchema } from './schema.ts';
import { accountNotFound } from './errors.ts';

/** Operator routes over the ledger: audited adjustments and the invariant check (`mpay ledger verify`). */
export const ledgerAdminRoutes: FastifyPluginAsyncTypebox<{ deps: { db: Db; clock: Clock; ledger: Ledger } }> = async (
  app,
  { deps },
) => {
  app.post(
    '/admin/merchants/:id/ledger-adjustments',
    {
      config: { auth: 'admin', errors: [404, 409, 502] },
      schema: {
        tags: ['admin'],
        summary: "Audited mint (credit) or burn (debit) on a merchant's available PAY",
        params: UuidParams,
        headers: Type.Object({
          'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[\\x21-\\x7e]+$' })),
        }),
        body: Type.Object(
          {
            amount_micro_pay: MinorUnits('Amount in micro-PAY', 1),
            direction: Type.Union([Type.Literal('credit'), Type.Literal('debit')]),
            reason: Type.String({ minLength: 1, maxLength: 1000 }),
            is_sandbox: Type.Optional(
              Type.Boolean({ description: 'Adjust the sandbox account instead of the live one', default: false }),
            ),
            account: Type.Optional(
              Type.Union([Type.Literal('available'), Type.Literal('buffer')], {
                description:
                  "The merchant's available PAY (default) or its buffer (buffer_micro_pay of the balance view)",
                default: 'available',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Envelope(LedgerAdjustmentSchema),
        },
      },
    },
    async (request, reply) => {
      const result = await adjustMerchantLedger(
        deps,
        adminActor(request),
        request.params.id,
        request.body,
        request.headers['idempotency-key'],
      );
      reply.status(201);
      if (result.replayed) reply.header('Idempotent-Replayed', 'true');
      return ok(result.view);
    },
  );

  app.get(
    '/admin/ledger/verify',
    {
      config: { auth: 'admin', errors: [502] },
      schema: {
        tags: ['admin'],
        summary: 'Check the ledger invariants (sum zero, no overdraft, minted - burned = circulation)',
        response: { 200: Envelope(VerificationSchema) },
      },
    },
    async () => ok(await deps.ledger.verify()),
  );

  app.get(
    '/admin/ledger/accounts/:name',
    {
      config: { auth: 'admin', errors: [404, 502] },
      schema: {
        tags: ['admin'],
        summary: 'Balance of one ledger account',
        params: Type.Object({ name: Type.String({ pattern: '^(live|sandbox):[A-Za-z0-9_.:-]{1,200}$' }) }),
        response: { 200: Envelope(Type.Object({ account: Type.String(), balance_micro_pay: Type.Integer() })) },
      },
    },
    async (request) => {
      const balance = (await deps.ledger.balances([request.params.name])).get(request.params.name) ?? null;
      if (balance === null) throw accountNotFound(request.params.name);
      return ok({ account: request.params.name, balance_micro_pay: balance });
    },
  );
};
