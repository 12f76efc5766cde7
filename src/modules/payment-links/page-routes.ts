import formbody from '@fastify/formbody';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { fill, type Lang } from '../../http/language.ts';
import { AppError } from '../../lib/errors.ts';
import { minorToDecimal, type Currency } from '../../lib/money.ts';
import { pickLang } from '../checkout/i18n.ts';
import { money } from '../checkout/page.ts';
import { merchantNames } from '../merchants/service.ts';
import { qrPng } from '../reference/promptpay.ts';
import { LINK_STRINGS } from './i18n.ts';
import { renderLinkNotFoundPage, renderLinkPage, renderUnavailablePage } from './page.ts';
import { PAYMENT_LINK_ID_PATTERN } from './routes.ts';
import { findLink, LinkUnavailable, linkState, presentLink, useLink, type PaymentLinksDeps } from './service.ts';
import type { PaymentLinkRow } from './tables.ts';

const LINK_ID = new RegExp(PAYMENT_LINK_ID_PATTERN);
const Params = Type.Object({ id: Type.String({ maxLength: 100, description: 'Payment link id (plink_…)' }) });
const LangQuery = Type.Object({
  lang: Type.Optional(Type.String({ maxLength: 8, description: 'th or en; default from Accept-Language' })),
});

function htmlHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Content-Type-Options', 'nosniff')
    .header(
      'Content-Security-Policy',
      "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; script-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
}

/**
 * The payment link's public page (`/pay/<id>`): the link's id is in the URL the merchant shares. GET shows what to
 * pay (a fixed amount, or a field for the payer's amount) and the link's QR for sharing; POST makes a payment from
 * the link and answers 303 to its checkout. A used-up, expired or inactive link answers 410 and makes no payment.
 */
export const paymentLinkPageRoutes: FastifyPluginAsyncTypebox<{ deps: PaymentLinksDeps }> = async (app, { deps }) => {
  await app.register(formbody, { bodyLimit: 8 * 1024 });

  async function page(
    reply: FastifyReply,
    id: string,
    lang_query: string | undefined,
    accept_language: string | undefined,
    error?: { status: number; message: string; typed_amount?: string | undefined },
  ) {
    htmlHeaders(reply);
    let link: PaymentLinkRow;
    try {
      if (!LINK_ID.test(id)) throw new AppError('NOT_FOUND', 'Payment link not found');
      link = await findLink(deps, id);
    } catch (caught) {
      if (caught instanceof AppError && caught.code === 'NOT_FOUND')
        return reply.status(404).send(renderLinkNotFoundPage(pickLang(lang_query, accept_language, undefined)));
      throw caught;
    }
    const lang = pickLang(lang_query, accept_language, link.currency);
    const now = deps.clock.now();
    const view = presentLink(link, now, deps.public_base_url);
    const state = linkState(link, now);
    if (state !== 'open') return reply.status(410).send(renderUnavailablePage(lang, view, state));
    const merchant_name = (await merchantNames(deps.db, [link.merchant_id])).get(link.merchant_id) ?? '';
    const share_qr = `data:image/png;base64,${(await qrPng(view.url)).toString('base64')}`;
    return reply.status(error?.status ?? 200).send(
      renderLinkPage({
        link: view,
        merchant_name,
        lang,
        share_qr,
        error: error?.message,
        typed_amount: error?.typed_amount,
      }),
    );
  }

  app.get(
    '/pay/:id',
    {
      config: { auth: 'public', errors: [404, 'GONE'] },
      schema: {
        tags: ['payment-links'],
        summary: "A payment link's page (HTML, Thai and English): what to pay, and the link's QR for sharing",
        params: Params,
        querystring: LangQuery,
        produces: ['text/html'],
      },
    },
    async (request, reply) => page(reply, request.params.id, request.query.lang, request.headers['accept-language']),
  );

  app.post(
    '/pay/:id',
    {
      config: { auth: 'public', errors: [404, 409, 'GONE'] },
      schema: {
        tags: ['payment-links'],
        summary:
          'Use a payment link: makes a payment and continues to its checkout (303); 410 when the link takes none',
        description:
          "A form post. For a link whose payer types the amount, `amount` is in major units (150 or 150.50) and must fall in the link's range (400 with the page again otherwise).",
        params: Params,
        querystring: LangQuery,
        consumes: ['application/x-www-form-urlencoded'],
        body: Type.Object({ amount: Type.Optional(Type.String({ maxLength: 40 })) }, { additionalProperties: true }),
      },
      // A form without fields (a fixed amount's button) may come without a body.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const lang_query = request.query.lang;
      const accept = request.headers['accept-language'];
      if (!LINK_ID.test(id)) return page(reply, id, lang_query, accept);
      const typed_amount = request.body?.amount;
      try {
        const payment = await useLink(deps, id, typed_amount);
        const lang = lang_query === 'th' || lang_query === 'en' ? `?lang=${lang_query}` : '';
        return reply
          .status(303)
          .header('Location', `/checkout/${encodeURIComponent(payment.id)}${lang}`)
          .send();
      } catch (caught) {
        if (caught instanceof LinkUnavailable || (caught instanceof AppError && caught.code === 'NOT_FOUND'))
          return page(reply, id, lang_query, accept);
        if (caught instanceof AppError && caught.code === 'VALIDATION_ERROR') {
          const link = await findLink(deps, id);
          const t = LINK_STRINGS[pickLang(lang_query, accept, link.currency)];
          return page(reply, id, lang_query, accept, {
            status: 400,
            message: amountMessage(t, caught, link),
            typed_amount,
          });
        }
        if (
          caught instanceof AppError &&
          (caught.code === 'PAYMENT_INSUFFICIENT_LIQUIDITY' || caught.code === 'MATCHING_UNAVAILABLE')
        ) {
          const link = await findLink(deps, id);
          const t = LINK_STRINGS[pickLang(lang_query, accept, link.currency)];
          return page(reply, id, lang_query, accept, { status: 409, message: t.unavailable, typed_amount });
        }
        throw caught;
      }
    },
  );
};

function amountMessage(t: (typeof LINK_STRINGS)[Lang], error: AppError, link: PaymentLinkRow): string {
  if (error.details[0]?.message !== 'out of range' || link.amount_min_minor === null || link.amount_max_minor === null)
    return t.bad_amount;
  const currency = link.currency as Currency;
  return fill(t.out_of_range, {
    min: money(minorToDecimal(Number(link.amount_min_minor), currency), currency),
    max: money(minorToDecimal(Number(link.amount_max_minor), currency), currency),
  });
}
