import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sellerOf } from '../../http/auth.ts';
import { Envelope, ok, Page, PAYMENT_ID_PATTERN } from '../../http/schemas.ts';
import type { PaymentsDeps } from './deps.ts';
import { decideLeg } from './payee.ts';
import { SellerLegSchema, SellerLegsQuery } from './schema.ts';
import { listSellerLegs, sellerLegSlip } from './seller.ts';

const SlipTypes = ['image/jpeg', 'image/png', 'image/webp', 'image/heic', 'application/pdf'];

const LegParams = Type.Object({
  payment_id: Type.String({ pattern: PAYMENT_ID_PATTERN, description: 'Payment id' }),
  match_order: Type.Integer({ minimum: 1, description: "The leg's match_order" }),
});

/**
 * The seller's routes (its own key, `sel_live_…`; DESIGN 3b): the legs that carry a slip, the slip itself, and its
 * word on a leg waiting for it. Merchant credentials are 403 here, and a seller key is 403 on merchant routes.
 */
export const sellerRoutes: FastifyPluginAsyncTypebox<{ deps: PaymentsDeps }> = async (app, { deps }) => {
  app.get(
    '/v1/seller/legs',
    {
      config: { operation_id: 'listSellerLegs', auth: 'seller' },
      schema: {
        tags: ['seller'],
        summary:
          "The seller's live legs that carry a slip, newest first; status=awaiting_payee: those waiting for its word",
        querystring: SellerLegsQuery,
        response: { 200: Page(SellerLegSchema) },
      },
    },
    async (request) =>
      listSellerLegs(deps, sellerOf(request), {
        limit: request.query.limit,
        cursor: request.query.cursor,
        status: request.query.status as never,
      }),
  );

  app.get(
    '/v1/seller/legs/:payment_id/:match_order/slip',
    {
      config: { operation_id: 'getSellerLegSlip', auth: 'seller', errors: [404] },
      schema: {
        tags: ['seller'],
        summary: "A leg's slip image, as the buyer uploaded it",
        params: LegParams,
        produces: SlipTypes,
        response: {
          200: {
            description: 'The slip (its type as read from its bytes)',
            content: Object.fromEntries(
              SlipTypes.map((type) => [type, { schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }) }]),
            ),
          },
        },
      },
    },
    async (request, reply) => {
      const slip = await sellerLegSlip(
        deps.db,
        sellerOf(request),
        request.params.payment_id,
        request.params.match_order,
      );
      return reply.header('Cache-Control', 'private, no-store').type(slip.content_type).send(Buffer.from(slip.data));
    },
  );

  app.post(
    '/v1/seller/legs/:payment_id/:match_order/confirm',
    {
      config: {
        operation_id: 'confirmSellerLeg',
        auth: 'seller',
        errors: [404, 'LEG_NOT_AWAITING_PAYEE', 'LEDGER_UNAVAILABLE'],
      },
      schema: {
        tags: ['seller'],
        summary:
          'Confirm that the money of a leg waiting for you arrived: the leg completes (your PAY goes to the merchant less the fee)',
        params: LegParams,
        response: { 200: Envelope(SellerLegSchema) },
      },
    },
    async (request) =>
      ok(
        await decideLeg(
          deps,
          request.params.payment_id,
          request.params.match_order,
          { by: { seller_id: sellerOf(request) } },
          { decision: 'confirm' },
        ),
      ),
  );

  app.post(
    '/v1/seller/legs/:payment_id/:match_order/reject',
    {
      config: {
        operation_id: 'rejectSellerLeg',
        auth: 'seller',
        errors: [404, 'LEG_NOT_AWAITING_PAYEE', 'LEDGER_UNAVAILABLE'],
      },
      schema: {
        tags: ['seller'],
        summary:
          'Say that the money of a leg waiting for you did not arrive: the payment fails, or ends partially_paid when another leg was verified',
        params: LegParams,
        body: Type.Object(
          { reason: Type.String({ minLength: 1, maxLength: 500, description: 'Why the money did not arrive' }) },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(SellerLegSchema) },
      },
    },
    async (request) =>
      ok(
        await decideLeg(
          deps,
          request.params.payment_id,
          request.params.match_order,
          { by: { seller_id: sellerOf(request) } },
          { decision: 'reject', reason: request.body.reason },
        ),
      ),
  );
};
