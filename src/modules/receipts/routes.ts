import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { randomBase62 } from '../../lib/crypto.ts';
import { pickLang } from '../checkout/i18n.ts';
import { renderPaymentReceipt, renderReceiptNotFound, renderRefundReceipt } from './page.ts';
import { paymentReceipt, refundReceipt, type ReceiptsDeps } from './service.ts';

const TOKEN = /^[0-9a-f]{64}$/;

function htmlHeaders(reply: FastifyReply, nonce: string): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Content-Type-Options', 'nosniff')
    .header(
      'Content-Security-Policy',
      `default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'`,
    );
}

/** The receipt pages: public, behind an unguessable token (the credential), showing the payment as it is now. */
export const receiptRoutes: FastifyPluginAsyncTypebox<{ deps: ReceiptsDeps }> = async (app, { deps }) => {
  app.get(
    '/receipts/:token',
    {
      config: { auth: 'public', errors: [404] },
      schema: {
        tags: ['receipts'],
        summary:
          "A payment's receipt (HTML, Thai and English, printable): amount, date, rail, bank references, refunds",
        params: Type.Object({ token: Type.String({ maxLength: 100, description: 'The token of `receipt_url`' }) }),
        querystring: Type.Object({
          lang: Type.Optional(Type.String({ maxLength: 8, description: 'th or en; default from Accept-Language' })),
        }),
        produces: ['text/html'],
      },
    },
    async (request, reply) => {
      const nonce = randomBase62(22);
      htmlHeaders(reply, nonce);
      const { token } = request.params;
      const receipt = TOKEN.test(token) ? await paymentReceipt(deps, token) : undefined;
      const refund = !receipt && TOKEN.test(token) ? await refundReceipt(deps, token) : undefined;
      if (refund) {
        const lang = pickLang(request.query.lang, request.headers['accept-language'], refund.currency);
        return reply.send(renderRefundReceipt({ receipt: refund, lang, token, nonce }));
      }
      if (!receipt)
        return reply
          .status(404)
          .send(
            renderReceiptNotFound(pickLang(request.query.lang, request.headers['accept-language'], undefined), nonce),
          );
      const lang = pickLang(request.query.lang, request.headers['accept-language'], receipt.currency);
      return reply.send(renderPaymentReceipt({ receipt, lang, token, nonce }));
    },
  );
};
