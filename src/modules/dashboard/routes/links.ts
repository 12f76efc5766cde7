import { idempotent } from '../../../http/idempotency.ts';
import { ok } from '../../../http/schemas.ts';
import { createLink, deactivateLink, getLink, listLinks } from '../../payment-links/service.ts';
import type { CreatePaymentLinkInput } from '../../payment-links/schema.ts';
import { listPayments } from '../../payments/service.ts';
import { qrPng } from '../../reference/promptpay.ts';
import { can, sendPage } from '../context.ts';
import { fieldNotOneOf } from '../errors.ts';
import { currencyField, isoDay, queryOf, requireField, withFormKey, type Form } from '../forms.ts';
import { linkDetailPage, linksPage } from '../pages/links.ts';
import { noticeOf, redirect, type PageRouter, type Signed } from '../routing.ts';

const LINK_ID = /^plink_[0-9a-f]{32}$/;

/** The create form as the API's body: a fixed amount, or the payer's range (decimals in major units, as typed). */
function linkInput(form: Form): CreatePaymentLinkInput {
  const text = (name: string) => form[name]?.trim().replace(/,/g, '') || undefined;
  const amount = text('amount');
  const min = text('min');
  const max = text('max');
  const max_payments = text('max_payments');
  if (max_payments !== undefined && !/^\d{1,7}$/.test(max_payments)) throw fieldNotOneOf('max_payments', ['1…1000000']);
  const expires = isoDay(text('expires_on'), 1);
  return {
    title: requireField(form, 'title').slice(0, 120),
    ...(text('description') ? { description: form['description']!.trim().slice(0, 1000) } : {}),
    currency: currencyField(form, 'currency'),
    ...(amount !== undefined ? { amount } : {}),
    ...(min !== undefined || max !== undefined ? { amount_range: { min: min ?? '', max: max ?? '' } } : {}),
    ...(form['reusable'] === 'yes' ? { reusable: true } : {}),
    ...(max_payments !== undefined ? { max_payments: Number(max_payments) } : {}),
    ...(expires ? { expires_at: expires } : {}),
  };
}

/** Payment links: list with copy, create, a link's page with its QR and payments, deactivate. */
export function linkRoutes({ deps, get, post }: PageRouter): void {
  const links = deps.payment_links;

  const listAgain = async ({ context, session, scope, form }: Signed, error: string) => {
    const list = await listLinks(links, scope, { limit: 25 });
    return linksPage(context, {
      links: list.data,
      next_cursor: list.next_cursor,
      can_create: can(session, 'money'),
      error,
      values: form,
    });
  };

  get(
    '/dashboard/links',
    'Payment links: create, list, copy',
    {},
    async ({ request, reply, context, session, scope }) => {
      const query = queryOf(request);
      const cursor = query['cursor']?.slice(0, 512);
      const list = await listLinks(links, scope, { cursor, limit: 25 });
      return sendPage(
        reply,
        linksPage(context, {
          links: list.data,
          next_cursor: list.next_cursor,
          cursor,
          can_create: can(session, 'money'),
          notice: noticeOf(context, query),
        }),
      );
    },
  );

  post(
    '/dashboard/links',
    'Create a payment link',
    { permission: 'money', on_error: listAgain },
    async ({ request, reply, scope, form }) => {
      const input = linkInput(form);
      withFormKey(request, form);
      const created = await idempotent(links, request, reply, { required: false }, async (trx) => ({
        status: 201,
        body: ok(await createLink(links, trx, scope, input)),
      }));
      return redirect(reply, `/dashboard/links/${created.data.id}?notice=done`);
    },
  );

  get(
    '/dashboard/links/:id',
    'A payment link: its QR, link to copy, the payments made from it, deactivate',
    { id_pattern: LINK_ID },
    async ({ request, id, reply, context, session, scope }) => {
      const link = await getLink(links, scope, id);
      const payments = await listPayments(deps.payments, scope, { payment_link_id: id, limit: 25 });
      const qr_data_url = `data:image/png;base64,${(await qrPng(link.url)).toString('base64')}`;
      return sendPage(
        reply,
        linkDetailPage(context, {
          link,
          qr_data_url,
          payments: payments.data,
          can_deactivate: can(session, 'money'),
          notice: noticeOf(context, request.query),
        }),
      );
    },
  );

  post(
    '/dashboard/links/:id/deactivate',
    'Deactivate a payment link for good',
    { permission: 'money', confirm: true, id_pattern: LINK_ID },
    async ({ id, reply, scope }) => {
      await links.db.transaction().execute((trx) => deactivateLink(links, trx, scope, id));
      return redirect(reply, `/dashboard/links/${id}?notice=done`);
    },
  );
}
