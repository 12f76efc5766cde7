import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { merchantScope } from '../../http/auth.ts';
import { Envelope, ok, UuidParams } from '../../http/schemas.ts';
import { BalanceSchema, DeficitSchema } from './schema.ts';
import { merchantBalance, readBalance, type BalanceDeps } from './service.ts';

export const balanceRoutes: FastifyPluginAsyncTypebox<{ deps: BalanceDeps }> = async (app, { deps }) => {
  app.get(
    '/v1/merchants/:id/balance',
    {
      config: { auth: 'merchant', errors: [403, 404, 502] },
      schema: {
        tags: ['balance'],
        summary: "The caller's PAY balance and deficit",
        params: UuidParams,
        response: { 200: Envelope(BalanceSchema) },
      },
    },
    async (request) => ok(await merchantBalance(deps, merchantScope(request), request.params.id)),
  );

  app.get(
    '/admin/merchants/:id/deficit',
    {
      config: { auth: 'admin', errors: [404, 502] },
      schema: {
        tags: ['admin'],
        summary: "A merchant's live balance with the fields hidden from merchants",
        params: UuidParams,
        response: {
          200: Envelope(DeficitSchema),
        },
      },
    },
    async (request) => ok(await readBalance(deps, request.params.id, false)),
  );
};
