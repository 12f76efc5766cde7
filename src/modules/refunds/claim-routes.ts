import formbody from '@fastify/formbody';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { chosenLang, type Lang } from '../../http/language.ts';
import { formFields } from '../../http/multipart.ts';
import { AppError } from '../../lib/errors.ts';
import { openClaim, submitClaim } from './claim.ts';
import { CLAIM_STRINGS, renderClaimNotFound, renderClaimPage } from './claim-page.ts';
import type { RefundsDeps } from './service.ts';

const Params = Type.Object({ token: Type.String({ maxLength: 100, description: "The claim link's token" }) });
const LangQuery = Type.Object({
  lang: Type.Optional(Type.String({ maxLength: 8, description: 'th or en; default from Accept-Language' })),
});

function htmlHeaders(reply: FastifyReply): FastifyReply {
  return (
    reply
      .type('text/html; charset=utf-8')
      .header('Cache-Control', 'no-store')
      // same-origin, not no-referrer: the form's post must carry this page's Origin (no-referrer makes it `null`), and
      // the token in the URL still never leaves for another site.
      .header('Referrer-Policy', 'same-origin')
      .header('X-Content-Type-Options', 'nosniff')
      .header(
        'Content-Security-Policy',
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
      )
  );
}

/** `?lang=` of the visitor's explicit choice, kept across the form's post and its redirect. */
function langQuery(request: FastifyRequest): string {
  const lang = (request.query as { lang?: string }).lang;
  return lang === 'th' || lang === 'en' ? `?lang=${lang}` : '';
}

/** The buyer's refund page: public, the unguessable token in the URL is the credential. */
export const claimRoutes: FastifyPluginAsyncTypebox<{ deps: RefundsDeps }> = async (app, { deps }) => {
  await app.register(formbody, { bodyLimit: 16 * 1024 });

  const langOf = (request: FastifyRequest, currency: string | undefined): Lang =>
    chosenLang((request.query as { lang?: string }).lang, request.headers['accept-language']) ??
    (currency === undefined || currency === 'THB' ? 'th' : 'en');

  async function page(
    request: FastifyRequest<{ Params: { token: string } }>,
    reply: FastifyReply,
    extra: { status?: number; errors?: AppError['details']; form?: Record<string, string> } = {},
  ) {
    htmlHeaders(reply);
    const token = request.params.token;
    let view: Awaited<ReturnType<typeof openClaim>>;
    try {
      view = await openClaim(deps, token);
    } catch (caught) {
      if (caught instanceof AppError && caught.code === 'NOT_FOUND')
        return reply.status(404).send(renderClaimNotFound(langOf(request, undefined)));
      throw caught;
    }
    return reply.status(extra.status ?? 200).send(
      renderClaimPage({
        view,
        lang: langOf(request, view.currency),
        path: `/refunds/claim/${encodeURIComponent(token)}`,
        action: `/refunds/claim/${encodeURIComponent(token)}${langQuery(request)}`,
        banks: view.stage === 'claim' && view.rails.includes('thai_bank') ? await deps.banks.list() : [],
        errors: extra.errors,
        form: extra.form,
      }),
    );
  }

  app.get(
    '/refunds/claim/:token',
    {
      config: { auth: 'public', errors: [404] },
      schema: {
        tags: ['refunds'],
        summary: "The buyer's refund page (HTML, Thai and English): where the money goes, then whether it arrived",
        params: Params,
        querystring: LangQuery,
        produces: ['text/html'],
      },
    },
    async (request, reply) => page(request, reply),
  );

  app.post(
    '/refunds/claim/:token',
    {
      config: { auth: 'public', errors: [400, 403, 404, 409] },
      schema: {
        tags: ['refunds'],
        summary:
          "The claim page's form post: `action=destination` with `rail` and that rail's fields, or `action=received` / `not_received`; 303 back to the page",
        params: Params,
        querystring: LangQuery,
        consumes: ['application/x-www-form-urlencoded'],
      },
    },
    async (request, reply) => {
      // The token is the credential, so a post from another site is refused by its Origin (no cookie, no CSRF token).
      const origin = request.headers.origin;
      if (
        origin !== undefined &&
        origin !== `${request.protocol}://${request.headers.host}` &&
        origin !== new URL(deps.public_base_url).origin
      ) {
        htmlHeaders(reply);
        return reply
          .status(403)
          .send(renderClaimNotFound(langOf(request, undefined), CLAIM_STRINGS[langOf(request, undefined)].cross_site));
      }
      const form = formFields(request.body);
      try {
        await submitClaim(deps, request.params.token, form);
      } catch (caught) {
        if (!(caught instanceof AppError)) throw caught;
        if (caught.code === 'NOT_FOUND') return page(request, reply);
        if (caught.code === 'VALIDATION_ERROR') {
          const errors = caught.details.length > 0 ? caught.details : [{ message: caught.message }];
          return page(request, reply, { status: 400, errors, form });
        }
        return page(request, reply, { status: 409, errors: [{ message: caught.message }] });
      }
      return reply
        .status(303)
        .header('Location', `/refunds/claim/${encodeURIComponent(request.params.token)}${langQuery(request)}`)
        .send();
    },
  );
};
