import { CURRENCIES } from '../../../lib/money.ts';
import type { PaymentLinkView } from '../../payment-links/schema.ts';
import type { PaymentView } from '../../payments/present.ts';
import { formKey } from '../context.ts';
import { money, when } from '../format.ts';
import { html, query } from '../html.ts';
import { csrfField, flash, page, type PageContext, statusBadge } from '../layout.ts';

/** A link's amount: fixed, or the range the payer types within. */
function linkAmount(link: PaymentLinkView): string {
  if (link.amount !== null) return money(link.amount, link.currency);
  const range = link.amount_range;
  return range ? `${money(range.min, link.currency)} – ${money(range.max, link.currency)}` : '';
}

/** The link's URL to copy: selectable without a script, a Copy button with one. */
function copyField(context: PageContext, id: string, url: string) {
  const { t } = context;
  return html`<span class="copy"><label class="visually-hidden" for="${id}">${t('link_url')}</label><input id="${id}" class="mono" type="text" readonly value="${url}" size="34"><button type="button" class="secondary" data-copy="${id}" data-copied="${t('copied')}">${t('copy')}</button></span>`;
}

export function linksPage(
  context: PageContext,
  model: {
    links: PaymentLinkView[];
    next_cursor: string | null;
    cursor?: string | undefined;
    can_create: boolean;
    notice?: string | undefined;
    error?: string | undefined;
    values?: Record<string, string>;
  },
): string {
  const { t } = context;
  const values = model.values ?? {};
  const create = model.can_create
    ? html`<section class="card"><h2>${t('new_link')}</h2><form method="post" action="/dashboard/links" class="filters" id="new-link">${csrfField(context)}<input type="hidden" name="_key" value="${formKey()}">
<div><label for="link-title">${t('link_title')}</label><input id="link-title" name="title" required maxlength="120" size="24" value="${values['title'] ?? ''}"></div>
<div><label for="link-description">${t('description')}</label><input id="link-description" name="description" maxlength="1000" size="24" value="${values['description'] ?? ''}"></div>
<div><label for="link-currency">${t('currency')}</label><select id="link-currency" name="currency">${CURRENCIES.map((currency) => html`<option${currency === (values['currency'] ?? 'THB') ? html` selected` : ''}>${currency}</option>`)}</select></div>
<div><label for="link-amount">${t('fixed_amount')}</label><input id="link-amount" name="amount" inputmode="decimal" size="10" value="${values['amount'] ?? ''}"></div>
<div><label for="link-min">${t('payer_amount_min')}</label><input id="link-min" name="min" inputmode="decimal" size="8" value="${values['min'] ?? ''}"></div>
<div><label for="link-max">${t('payer_amount_max')}</label><input id="link-max" name="max" inputmode="decimal" size="8" value="${values['max'] ?? ''}"></div>
<div><input type="checkbox" id="link-reusable" name="reusable" value="yes"${values['reusable'] === 'yes' ? html` checked` : ''}><label for="link-reusable">${t('reusable')}</label></div>
<div><label for="link-max-payments">${t('max_payments')}</label><input id="link-max-payments" name="max_payments" inputmode="numeric" size="5" value="${values['max_payments'] ?? ''}"></div>
<div><label for="link-expires">${t('expires_on')}</label><input id="link-expires" name="expires_on" type="date" value="${values['expires_on'] ?? ''}"></div>
<div><button type="submit" id="create-link">${t('create_link')}</button></div></form><p>${t('link_amount_hint')}</p></section>`
    : '';
  const rows = model.links.map(
    (link) =>
      html`<tr data-link="${link.id}"><td data-label="${t('link_title')}"><a href="/dashboard/links/${link.id}">${link.title}</a></td><td class="num" data-label="${t('amount')}">${linkAmount(link)}</td><td data-label="${t('status')}">${statusBadge(context, link.state)}</td><td class="num" data-label="${t('paid_count')}">${link.payments_completed}${link.max_payments !== null ? ` / ${link.max_payments}` : link.reusable ? '' : ' / 1'}</td><td data-label="${t('link_url')}">${copyField(context, `url-${link.id}`, link.url)}</td><td data-label="${t('created')}">${when(context, link.created_at)}</td></tr>`,
  );
  return page(context, {
    title: t('links'),
    section: 'links',
    body: html`<h1>${t('links')}</h1>${flash(model.notice)}${flash(model.error, 'error')}${create}
<section class="card"><table id="links" class="cards"><thead><tr><th>${t('link_title')}</th><th class="num">${t('amount')}</th><th>${t('status')}</th><th class="num">${t('paid_count')}</th><th>${t('link_url')}</th><th>${t('created')}</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="6">${t('none')}</td></tr>`}</tbody></table>
<p>${model.cursor ? html`<a href="/dashboard/links">${t('first_page')}</a> ` : ''}${model.next_cursor ? html`<a id="next-page" href="/dashboard/links${query({ cursor: model.next_cursor })}">${t('next_page')}</a>` : ''}</p></section>`,
  });
}

export function linkDetailPage(
  context: PageContext,
  model: {
    link: PaymentLinkView;
    qr_data_url: string;
    payments: PaymentView[];
    can_deactivate: boolean;
    notice?: string | undefined;
  },
): string {
  const { t } = context;
  const { link } = model;
  const deactivate =
    model.can_deactivate && link.active
      ? html`<form method="post" action="/dashboard/links/${link.id}/deactivate" class="filters">${csrfField(context)}<div><input type="checkbox" id="confirm-deactivate" name="confirm" value="yes" required><label for="confirm-deactivate">${t('confirm_deactivate')}</label></div><button type="submit" class="danger" id="deactivate-link">${t('deactivate')}</button></form>`
      : '';
  return page(context, {
    title: `${t('links')} ${link.title}`,
    section: 'links',
    body: html`<p><a href="/dashboard/links">← ${t('links')}</a></p><h1>${link.title}</h1>${flash(model.notice)}
<div class="grid"><section class="card"><dl class="fields">
<dt>${t('id')}</dt><dd class="mono" id="link-id">${link.id}</dd>
<dt>${t('status')}</dt><dd id="link-state">${statusBadge(context, link.state)}</dd>
<dt>${t('amount')}</dt><dd>${linkAmount(link)}</dd>
${link.description ? html`<dt>${t('description')}</dt><dd>${link.description}</dd>` : ''}
<dt>${t('paid_count')}</dt><dd id="link-paid">${link.payments_completed}${link.max_payments !== null ? ` / ${link.max_payments}` : link.reusable ? '' : ' / 1'}</dd>
<dt>${t('expires')}</dt><dd>${link.expires_at ? when(context, link.expires_at) : '—'}</dd>
<dt>${t('created')}</dt><dd>${when(context, link.created_at)}</dd>
<dt>${t('link_url')}</dt><dd>${copyField(context, 'link-url', link.url)}</dd>
</dl>${deactivate}</section>
<section class="card"><h2>${t('link_qr')}</h2><img class="qr" id="link-qr" src="${model.qr_data_url}" alt="${t('link_qr')}" width="240" height="240"></section></div>
<section class="card"><h2>${t('link_payments')}</h2><table class="cards"><thead><tr><th class="num">${t('amount')}</th><th>${t('status')}</th><th>${t('id')}</th><th>${t('created')}</th></tr></thead><tbody>
${model.payments.length ? model.payments.map((payment) => html`<tr><td class="num" data-label="${t('amount')}">${money(payment.amount, payment.currency)}</td><td data-label="${t('status')}">${statusBadge(context, payment.status)}</td><td class="mono" data-label="${t('id')}"><a href="/dashboard/payments/${payment.id}">${payment.id}</a></td><td data-label="${t('created')}">${when(context, payment.created_at)}</td></tr>`) : html`<tr><td colspan="4">${t('none')}</td></tr>`}</tbody></table></section>`,
  });
}
