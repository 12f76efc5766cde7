import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { merchantScope } from '../../http/auth.ts';
import { PngResponse, sendPng } from '../../http/png.ts';
import { Envelope, ok, PAYMENT_ID_PATTERN } from '../../http/schemas.ts';
import { CheckoutSchema } from './schema.ts';
import type { CheckoutDeps } from './service.ts';
import { getCheckoutForMerchant, promptpayQrForPayment } from './view.ts';

const PaymentIdParams = Type.Object({
  id: Type.String({ pattern: PAYMENT_ID_PATTERN, description: 'Payment id: a UUID, or sbx_ + UUID in sandbox' }),
});

/**
 * The checkout's API beside the hosted page: the page's view-model for the merchant's key, and the PNG QR of a THB
 * leg (public: the payment id is the credential). Paths stay under /v1/payments; the checkout module serves them.
 */
export const checkoutApiRoutes: FastifyPluginAsyncTypebox<{ deps: CheckoutDeps }> = async (app, { deps }) => {
  app.get(
    '/v1/payments/:id/checkout',
    {
      config: { auth: 'key', errors: [404] },
      schema: {
        tags: ['payments'],
        summary: 'Checkout view-model (what the hosted page shows)',
        params: PaymentIdParams,
        response: { 200: Envelope(CheckoutSchema) },
      },
    },
    async (request) => ok(await getCheckoutForMerchant(deps, merchantScope(request), request.params.id)),
  );

  app.get(
    '/v1/payments/:id/promptpay-qr',
    {
      config: { auth: 'public', errors: ['NOT_TH'] },
      schema: {
        tags: ['promptpay'],
        summary: "PNG QR of a THB leg's PromptPay payload (public: the payment id is the credential)",
        params: PaymentIdParams,
        querystring: Type.Object({
          leg: Type.Optional(
            Type.Integer({ minimum: 1, maximum: 100, description: 'match_order of the leg; default the first' }),
          ),
        }),
        ...PngResponse,
      },
    },
    async (request, reply) =>
      sendPng(reply, await promptpayQrForPayment(deps, request.params.id, request.query.leg), 'public'),
  );
};
