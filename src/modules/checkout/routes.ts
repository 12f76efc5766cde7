import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { PAYMENT_ID_PATTERN, Envelope, ok } from '../../http/schemas.ts';
import { randomBase62 } from '../../lib/crypto.ts';
import { AppError } from '../../lib/errors.ts';
import { readProofParts } from '../../http/multipart.ts';
import { proofPartsAllowed } from '../payments/service.ts';
import { PROOF_MULTIPART_BODY } from '../payments/schema.ts';
import type { Lang } from '../../http/language.ts';
import { pickLang } from './i18n.ts';
import { renderCheckoutPage, renderNotFoundPage } from './page.ts';
import { checkoutStatus, openCheckout, uploadFromCheckout, type CheckoutDeps } from './service.ts';

const PAYMENT_ID = new RegExp(PAYMENT_ID_PATTERN);
const Params = Type.Object({ id: Type.String({ maxLength: 100, description: 'Payment id (UUID or sbx_ + UUID)' }) });
const LangQuery = Type.Object({
  lang: Type.Optional(Type.String({ maxLength: 8, description: 'th or en; default from Accept-Language' })),
});

export interface CheckoutRoutesOptions {
  deps: CheckoutDeps;
  proof_max_bytes: number;
  /** Status polling interval of the page and the success view's pause before returning the buyer. */
  poll_ms?: number;
  redirect_delay_ms?: number;
}

function htmlHeaders(reply: FastifyReply, nonce: string): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Content-Type-Options', 'nosniff')
    .header(
      'Content-Security-Policy',
      `default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
    );
}

/** Hosted checkout: the buyer's page (public; the unguessable payment id is the credential). */
export const checkoutRoutes: FastifyPluginAsyncTypebox<CheckoutRoutesOptions> = async (app, options) => {
  const { deps } = options;
  const poll_ms = options.poll_ms ?? 2000;
  const redirect_delay_ms = options.redirect_delay_ms ?? 2500;

  async function page(
    id: string,
    lang_query: string | undefined,
    accept_language: string | undefined,
    reply: FastifyReply,
    error?: { message: string; status: number },
  ) {
    const nonce = randomBase62(22);
    htmlHeaders(reply, nonce);
    if (!PAYMENT_ID.test(id))
      return reply.status(404).send(renderNotFoundPage(pickLang(lang_query, accept_language, undefined), nonce));
    let opened: Awaited<ReturnType<typeof openCheckout>>;
    try {
      opened = await openCheckout(deps, id);
    } catch (caught) {
      if (caught instanceof AppError && caught.code === 'NOT_FOUND')
        return reply.status(404).send(renderNotFoundPage(pickLang(lang_query, accept_language, undefined), nonce));
      throw caught;
    }
    const lang: Lang = pickLang(lang_query, accept_language, opened.view.currency);
    return reply.status(error?.status ?? 200).send(
      renderCheckoutPage({
        view: opened.view,
        lang,
        qr_data_urls: opened.qr_data_urls,
        nonce,
        error: error?.message,
        poll_ms,
        redirect_delay_ms,
      }),
    );
  }

  app.get(
    '/checkout/:id',
    {
      config: { auth: 'public', errors: [404] },
      schema: {
        tags: ['checkout'],
        summary: 'Hosted checkout page (HTML, Thai and English)',
        params: Params,
        querystring: LangQuery,
        produces: ['text/html'],
      },
    },
    async (request, reply) => page(request.params.id, request.query.lang, request.headers['accept-language'], reply),
  );

  app.get(
    '/checkout/:id/status',
    {
      config: { auth: 'public', errors: [404] },
      schema: {
        tags: ['checkout'],
        summary: "The hosted page's status poll",
        params: Type.Object({ id: Type.String({ pattern: PAYMENT_ID_PATTERN }) }),
        response: {
          200: Envelope(
            Type.Object({
              payment_id: Type.String(),
              status: Type.String(),
              awaiting_payee: Type.Boolean({
                description: "A leg's slip waits for its seller's confirmation (the page says so)",
              }),
              seconds_remaining: Type.Integer(),
              failure_reason: Type.Union([Type.String(), Type.Null()]),
              return_redirect_url: Type.String(),
            }),
          ),
        },
      },
    },
    async (request, reply) => {
      reply.header('Cache-Control', 'no-store');
      return ok(await checkoutStatus(deps, request.params.id));
    },
  );

  app.post(
    '/checkout/:id/proof',
    {
      config: { auth: 'public', multipart_body: PROOF_MULTIPART_BODY, errors: [404, 409, 413] },
      schema: {
        tags: ['checkout'],
        summary:
          "The buyer's proof upload from the hosted page (form post; 303 back to the page, which then shows confirming)",
        params: Params,
        querystring: LangQuery,
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const lang_query = request.query.lang;
      if (!PAYMENT_ID.test(id)) return page(id, lang_query, request.headers['accept-language'], reply);
      try {
        const parts = await readProofParts(request, options.proof_max_bytes, await proofPartsAllowed(deps, id));
        await uploadFromCheckout(deps, id, parts);
      } catch (caught) {
        const code = (caught as { code?: string }).code;
        if (caught instanceof AppError && caught.code === 'NOT_FOUND')
          return page(id, lang_query, request.headers['accept-language'], reply);
        if (caught instanceof AppError) {
          const status = caught.code === 'PAYMENT_BAD_STATE' || caught.code === 'PROOF_DUPLICATE' ? 409 : 400;
          return page(id, lang_query, request.headers['accept-language'], reply, { message: caught.message, status });
        }
        if (code === 'FST_REQ_FILE_TOO_LARGE') {
          const lang = pickLang(lang_query, request.headers['accept-language'], undefined);
          return page(id, lang_query, request.headers['accept-language'], reply, {
            message: lang === 'th' ? 'ไฟล์ใหญ่เกินไป' : 'The file is too large',
            status: 413,
          });
        }
        throw caught;
      }
      const lang = lang_query === 'th' || lang_query === 'en' ? `?lang=${lang_query}` : '';
      return reply
        .status(303)
        .header('Location', `/checkout/${encodeURIComponent(id)}${lang}`)
        .send();
    },
  );
};
