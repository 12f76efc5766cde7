import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { merchantScope } from '../../http/auth.ts';
import { idempotentWrite } from '../../http/idempotency.ts';
import { Envelope, ListQuery, ok, Page } from '../../http/schemas.ts';
import { CreatePaymentLinkBody } from './schema.ts';
import { createLink, deactivateLink, getLink, listLinks, type PaymentLinksDeps } from './service.ts';

export const PAYMENT_LINK_ID_PATTERN = '^plink_[0-9a-f]{32}$';
const LinkParams = Type.Object({
  id: Type.String({ pattern: PAYMENT_LINK_ID_PATTERN, description: 'plink_ + 32 hex' }),
});

const MODE_NOTE =
  "A link belongs to the mode of the credential that made it (a test or sandbox key makes sandbox links); a secret API key, a merchant JWT or a dashboard session manages it. Another mode's or merchant's link is 404.";

/** The merchant's payment links: create, list, read, deactivate (a link is never deleted). */
export const paymentLinkRoutes: FastifyPluginAsyncTypebox<{ deps: PaymentLinksDeps }> = async (app, { deps }) => {
  const LinkRef = Type.Ref('PaymentLink');

  app.post(
    '/v1/payment-links',
    {
      config: { auth: 'key_or_merchant', errors: ['IDEMPOTENCY_KEY_CONFLICT'] },
      schema: {
        tags: ['payment-links'],
        summary: 'Create a payment link: a page to share that makes a payment on each use',
        description: `Give a fixed \`amount\` or an \`amount_range\` the payer types within. Single use by default: the first completed payment uses it up; \`reusable: true\` with an optional \`max_payments\` (completed payments). \`Idempotency-Key\` optional. ${MODE_NOTE}`,
        body: CreatePaymentLinkBody,
        response: { 201: Envelope(LinkRef) },
      },
    },
    async (request, reply) =>
      idempotentWrite(deps, request, reply, { required: false, status: 201 }, (trx, scope) =>
        createLink(deps, trx, scope, request.body),
      ),
  );

  app.get(
    '/v1/payment-links',
    {
      config: { auth: 'key_or_merchant' },
      schema: {
        tags: ['payment-links'],
        summary: "The caller's payment links, newest first",
        description: MODE_NOTE,
        querystring: ListQuery({
          active: Type.Optional(Type.Boolean({ description: 'true: not deactivated; false: deactivated' })),
        }),
        response: { 200: Page(LinkRef) },
      },
    },
    async (request) => listLinks(deps, merchantScope(request), request.query),
  );

  app.get(
    '/v1/payment-links/:id',
    {
      config: { auth: 'key_or_merchant', errors: [404] },
      schema: {
        tags: ['payment-links'],
        summary: 'One payment link, with its completed payments count and state',
        description: MODE_NOTE,
        params: LinkParams,
        response: { 200: Envelope(LinkRef) },
      },
    },
    async (request) => ok(await getLink(deps, merchantScope(request), request.params.id)),
  );

  app.post(
    '/v1/payment-links/:id/deactivate',
    {
      config: { auth: 'key_or_merchant', errors: [404] },
      schema: {
        tags: ['payment-links'],
        summary: 'Deactivate a payment link for good: its page answers 410; payments made from it go on',
        description: `\`payment_link.updated\` on the change; an inactive link is answered as it is. ${MODE_NOTE}`,
        params: LinkParams,
        response: { 200: Envelope(LinkRef) },
      },
    },
    async (request, reply) =>
      idempotentWrite(deps, request, reply, { required: false, status: 200 }, (trx, scope) =>
        deactivateLink(deps, trx, scope, request.params.id),
      ),
  );
};
