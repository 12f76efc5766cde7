import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { merchantScope } from '../../http/auth.ts';
import { Envelope, NullableTimestamp, ok, UuidParams } from '../../http/schemas.ts';
import { merchantBalance, readBalance, type BalanceDeps } from './service.ts';

const BalanceFields = {
  available_micro_pay: Type.Integer({ description: 'Ledger balance of the available account' }),
  buffer_micro_pay: Type.Integer({ description: 'Ledger balance of the buffer account' }),
  net_obligation_micro_pay: Type.Integer({ description: 'Sum of validated-pending receiver obligations' }),
  deficit_micro_pay: Type.Integer({ description: 'max(0, buffer threshold - (available + buffer - net obligation))' }),
  apr_bps: Type.Integer({ description: 'Prospective penalty APR in basis points' }),
  entry_fee_usd: Type.String({ description: 'USD-quoted, settled in PAY' }),
  countdown_days: Type.Union([Type.Integer(), Type.Null()], { description: 'Grace days left; null without a deficit' }),
};

export const balanceRoutes: FastifyPluginAsyncTypebox<{ deps: BalanceDeps }> = async (app, { deps }) => {
  app.get(
    '/v1/merchants/:id/balance',
    {
      config: { auth: 'merchant', errors: [403, 404, 502] },
      schema: { tags: ['balance'], summary: "The caller's PAY balance and deficit", params: UuidParams, response: { 200: Envelope(Type.Object(BalanceFields)) } },
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
          200: Envelope(
            Type.Object({
              merchant_id: Type.String(),
              ...BalanceFields,
              buffer_threshold_micro_pay: Type.Integer(),
              buffer_last_recalc_at: NullableTimestamp,
              trailing_30d_volume_micro_pay: Type.Integer(),
            }),
          ),
        },
      },
    },
    async (request) => ok(await readBalance(deps, request.params.id, false)),
  );
};
