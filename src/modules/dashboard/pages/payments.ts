import type { CheckoutView } from '../../checkout/view.ts';
import type { PaymentView } from '../../payments/present.ts';
import { PAYMENT_STATUSES } from '../../payments/schema.ts';
import { SCENARIOS } from '../../sandbox/service.ts';
import type { DeliveryView, EventView } from '../../webhooks/service.ts';
import { CURRENCIES } from '../../../lib/money.ts';
import { formKey } from '../context.ts';
import { deliveriesTable } from './deliveries.ts';
import { paymentRefundsSection } from './refunds.ts';
import type { RefundView } from '../../refunds/schema.ts';
import { STATUS_WORDS, wordOf } from '../words.ts';
import { html, query } from '../html.ts';
import { csrfField, eventLabel, flash, page, type PageContext, statusBadge } from '../layout.ts';
import { money, pay, when } from '../format.ts';

export interface PaymentsFilter {
  status?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  q?: string | undefined;
}

export function paymentsPage(
  context: PageContext,
  model: {
    filter: PaymentsFilter;
    payments: PaymentView[];
    next_cursor: string | null;
    cursor?: string | undefined;
    can_simulate: boolean;
    notice?: string | undefined;
    error?: string | undefined;
    values?: Record<string, string>;
  },
): string {
  const { t, session } = context;
  const { filter } = model;
  const values = model.values ?? {};
  const rows = model.payments.map(
    (payment) =>
      html`<tr><td class="num" data-label="${t('amount')}"><strong>${money(payment.amount, payment.currency)}</strong></td><td data-label="${t('status')}">${statusBadge(context, payment.status)}</td><td data-label="${t('order_id')}"><a href="/dashboard/payments/${payment.id}">${payment.order_id}</a></td><td class="mono" data-label="${t('id')}"><a href="/dashboard/payments/${payment.id}" aria-label="${t('id')} ${payment.id}">${payment.id}</a></td><td data-label="${t('created')}">${when(context, payment.created_at)}</td></tr>`,
  );
  const simulate =
    session?.mode === 'sandbox' && model.can_simulate
      ? html`<section class="card"><h2>${t('simulate')}</h2><form method="post" action="/dashboard/payments/simulate" class="filters">${csrfField(context)}<input type="hidden" name="_key" value="${formKey()}">
<div><label for="scenario">${t('scenario')}</label><select id="scenario" name="scenario">${SCENARIOS.map((scenario) => html`<option value="${scenario}"${scenario === values['scenario'] ? html` selected` : ''}>${scenario}</option>`)}</select></div>
<div><label for="sim-amount">${t('amount')}</label><input id="sim-amount" name="amount" inputmode="decimal" value="${values['amount'] ?? '100.00'}" size="10"></div>
<div><label for="sim-currency">${t('currency')}</label><select id="sim-currency" name="currency">${CURRENCIES.map((currency) => html`<option${currency === values['currency'] ? html` selected` : ''}>${currency}</option>`)}</select></div>
<div><label for="sim-order">${t('order_id')}</label><input id="sim-order" name="order_id" size="16" value="${values['order_id'] ?? ''}"></div>
<div><button type="submit" id="simulate">${t('run')}</button></div></form></section>`
      : '';
  const kept = { status: filter.status, from: filter.from, to: filter.to, q: filter.q };
  const export_href = `/dashboard/payments/export.csv${query(kept)}`;
  return page(context, {
    title: t('payments'),
    section: 'payments',
    body: html`<h1>${t('payments')}</h1>${flash(model.notice)}${flash(model.error, 'error')}${simulate}
<section class="card"><form method="get" action="/dashboard/payments" class="filters" role="search">
<div><label for="q">${t('search')}</label><input id="q" name="q" value="${filter.q ?? ''}" placeholder="${t('search_hint')}" size="28"></div>
<div><label for="status">${t('status')}</label><select id="status" name="status"><option value="">—</option><option value="succeeded"${filter.status === 'succeeded' ? html` selected` : ''}>${t('succeeded_filter')}</option>${PAYMENT_STATUSES.map((status) => html`<option value="${status}"${status === filter.status ? html` selected` : ''}>${wordOf(STATUS_WORDS, status, context.lang)}</option>`)}</select></div>
<div><label for="from">${t('from')}</label><input id="from" name="from" type="date" value="${filter.from ?? ''}"></div>
<div><label for="to">${t('to')}</label><input id="to" name="to" type="date" value="${filter.to ?? ''}"></div>
<div><button type="submit">${t('filter')}</button></div>
<div><a class="button" href="${export_href}" id="export-csv" download>${t('export_csv')}</a></div></form></section>
<section class="card"><table id="payments" class="cards"><thead><tr><th class="num">${t('amount')}</th><th>${t('status')}</th><th>${t('order_id')}</th><th>${t('id')}</th><th>${t('created')}</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="5">${t('none')}</td></tr>`}</tbody></table>
<p>${model.cursor ? html`<a href="/dashboard/payments${query(kept)}">${t('first_page')}</a> ` : ''}${model.next_cursor ? html`<a id="next-page" href="/dashboard/payments${query({ ...kept, cursor: model.next_cursor })}">${t('next_page')}</a>` : ''}</p></section>`,
  });
}

export function paymentDetailPage(
  context: PageContext,
  model: {
    payment: PaymentView;
    checkout: CheckoutView | null;
    qr_data_urls: Map<number, string>;
    events: EventView[];
    deliveries: DeliveryView[];
    can_redeliver: boolean;
    refunds: RefundView[];
    can_refund: boolean;
    notice?: string | undefined;
    error?: string | undefined;
    values?: Record<string, string>;
  },
): string {
  const { t } = context;
  const { payment } = model;
  const timeline = [...model.events].reverse();
  const back = `/dashboard/payments/${payment.id}`;
  const waiting =
    payment.status === 'confirming' && payment.match_details.some((leg) => leg.proof?.status === 'awaiting_payee');
  return page(context, {
    title: `${t('payments')} ${payment.order_id}`,
    section: 'payments',
    body: html`<p><a href="/dashboard/payments">← ${t('payments')}</a></p><h1>${payment.order_id}</h1>${flash(model.notice)}${flash(model.error, 'error')}
${waiting ? html`<div class="flash" role="status" id="awaiting-seller">${t('awaiting_seller_note')}</div>` : ''}${payment.status === 'partially_paid' ? html`<div class="flash" role="status" id="partially-paid">${t('partially_paid_note')}</div>` : ''}
<div class="grid"><section class="card"><dl class="fields">
<dt>${t('id')}</dt><dd class="mono" id="payment-id">${payment.id}</dd>
<dt>${t('amount')}</dt><dd>${money(payment.amount, payment.currency)}</dd>
<dt>${t('amount_received')}</dt><dd id="amount-received">${money(payment.amount_received, payment.currency)}</dd>
<dt>${t('status')}</dt><dd id="payment-status">${statusBadge(context, payment.status)}</dd>
<dt>${t('created')}</dt><dd>${when(context, payment.created_at)}</dd>
<dt>${t('checkout_link')}</dt><dd class="mono"><a href="${payment.checkout_url}">${payment.checkout_url}</a></dd>
${payment.amount_refunded > 0 ? html`<dt>${t('amount_refunded')}</dt><dd id="amount-refunded">${money(payment.amount_refunded, payment.currency)}</dd>` : ''}
${payment.receipt_url && payment.receipt_number !== null ? html`<dt>${t('receipt_link')}</dt><dd><a id="receipt-link" href="${payment.receipt_url}" target="_blank" rel="noopener">${t('receipt_link')} ${String(payment.receipt_number).padStart(6, '0')}</a></dd>` : ''}
${payment.payment_link_id ? html`<dt>${t('payment_link')}</dt><dd class="mono"><a id="payment-link" href="/dashboard/links/${payment.payment_link_id}">${payment.payment_link_id}</a></dd>` : ''}
${payment.failure_reason ? html`<dt>${t('failure_reason')}</dt><dd>${payment.failure_reason}</dd>` : ''}
</dl></section>
<section class="card"><h2>${t('timeline')}</h2><ol id="timeline">${timeline.length ? timeline.map((event) => html`<li>${when(context, event.created_at)} · ${eventLabel(context, event.type)}</li>`) : html`<li>${when(context, payment.created_at)} · ${statusBadge(context, payment.status)}</li>`}</ol></section></div>
<section class="card"><h2 id="legs-title">${t('legs')}</h2><div class="table-wrap" tabindex="0" role="region" aria-labelledby="legs-title"><table><thead><tr><th>#</th><th>${t('seller')}</th><th class="num">${t('amount')}</th><th class="num">${t('rate')}</th><th class="num">PAY</th><th>${t('slip')}</th><th>QR</th></tr></thead><tbody>
${payment.match_details.map((leg) => {
  const qr = model.qr_data_urls.get(leg.match_order);
  const payee = model.checkout?.legs.find((candidate) => candidate.match_order === leg.match_order)?.payee;
  return html`<tr><td>${leg.match_order}</td><td class="mono">${leg.seller_id}${payee && 'display_name' in payee ? html`<br>${payee.display_name}` : ''}</td><td class="num">${money(leg.allocated_fiat_amount, payment.currency)}</td><td class="num">${leg.rate}</td><td class="num">${pay(leg.amount_micro_pay)}</td><td class="slip" data-leg="${leg.match_order}">${leg.proof ? html`${statusBadge(context, leg.proof.status)}${leg.proof.reason ? html`<br>${leg.proof.reason}` : ''}<br>${when(context, leg.proof.received_at)}` : '—'}</td><td>${qr ? html`<img class="qr" src="${qr}" alt="PromptPay QR ${leg.match_order}" width="200" height="200">` : '—'}</td></tr>`;
})}</tbody></table></div></section>
${paymentRefundsSection(context, { payment, refunds: model.refunds, can_refund: model.can_refund, values: model.values ?? {} })}
<section class="card"><h2>${t('events')}</h2><table><thead><tr><th>${t('id')}</th><th>${t('type')}</th><th>${t('created')}</th><th>${t('status')}</th></tr></thead><tbody>
${model.events.map((event) => html`<tr><td class="mono" title="${event.id}">${event.id.slice(0, 12)}…</td><td>${eventLabel(context, event.type)}</td><td>${when(context, event.created_at)}</td><td>${event.delivery_status ? statusBadge(context, event.delivery_status) : '—'}</td></tr>`)}</tbody></table></section>
<section class="card"><h2>${t('deliveries')}</h2>${deliveriesTable(context, model.deliveries, { can_redeliver: model.can_redeliver, back, events: model.events })}</section>`,
  });
}
