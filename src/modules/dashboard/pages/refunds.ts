import { minorToDecimal, isCurrency } from '../../../lib/money.ts';
import type { PaymentView } from '../../payments/present.ts';
import { REFUNDABLE } from '../../payments/refunds.ts';
import { REFUND_FUNDINGS, REFUND_REASONS, REFUND_STATUSES, type RefundView } from '../../refunds/schema.ts';
import { formKey } from '../context.ts';
import { money, pay, when } from '../format.ts';
import { html, query, type Html } from '../html.ts';
import { csrfField, flash, page, type PageContext, statusBadge } from '../layout.ts';
import { FUNDING_WORDS, REFUND_REASON_WORDS, STATUS_WORDS, wordOf } from '../words.ts';

/** What remains to refund of a payment: what it received less its refunds that did not fail or get canceled. */
export function remainingToRefund(payment: PaymentView, refunds: RefundView[]): number {
  const counted = refunds
    .filter((refund) => refund.status !== 'failed' && refund.status !== 'canceled')
    .reduce((sum, refund) => sum + refund.amount, 0);
  return Math.max(0, payment.amount_received - counted);
}

/** A refund may be canceled before the money moved: waiting for its claim, or pending with no slip standing. */
export function cancellable(refund: RefundView): boolean {
  if (refund.status === 'requires_action') return true;
  return refund.status === 'pending' && !(refund.proof?.status === 'awaiting_buyer' && refund.failure_reason === null);
}

/** The merchant's slip is asked for on a pending merchant_transfer refund whose destination is known. */
export function takesProof(refund: RefundView): boolean {
  return (
    refund.status === 'pending' &&
    refund.funding === 'merchant_transfer' &&
    refund.destination_details !== null &&
    !(refund.proof?.status === 'awaiting_buyer' && refund.failure_reason === null)
  );
}

function copyField(context: PageContext, id: string, url: string): Html {
  const { t } = context;
  return html`<span class="copy"><label class="visually-hidden" for="${id}">${t('claim_link')}</label><input id="${id}" class="mono" type="text" readonly value="${url}" size="34"><button type="button" class="secondary" data-copy="${id}" data-copied="${t('copied')}">${t('copy')}</button></span>`;
}

function refundRows(context: PageContext, refunds: RefundView[], with_payment: boolean): Html[] {
  const { t, lang } = context;
  return refunds.map(
    (refund) =>
      html`<tr data-refund="${refund.id}"><td class="num" data-label="${t('amount')}"><strong>${money(refund.amount, refund.currency)}</strong></td><td data-label="${t('status')}">${statusBadge(context, refund.status)}</td><td data-label="${t('refund_reason')}">${refund.reason ? wordOf(REFUND_REASON_WORDS, refund.reason, lang) : '—'}</td><td class="mono" data-label="${t('id')}"><a href="/dashboard/refunds/${refund.id}" aria-label="${t('refund')} ${refund.id}">${refund.id}</a></td>${with_payment ? html`<td class="mono" data-label="${t('payment')}"><a href="/dashboard/payments/${refund.payment_id}" aria-label="${t('payment')} ${refund.payment_id}">${refund.payment_id}</a></td>` : ''}<td data-label="${t('created')}">${when(context, refund.created_at)}</td></tr>`,
  );
}

/** The payment page's refunds: the refund form (a role that may move money, a payment that received money), the list. */
export function paymentRefundsSection(
  context: PageContext,
  model: { payment: PaymentView; refunds: RefundView[]; can_refund: boolean; values?: Record<string, string> },
): Html {
  const { t, lang } = context;
  const { payment, refunds } = model;
  if (!REFUNDABLE.includes(payment.status) && !refunds.length) return html``;
  const values = model.values ?? {};
  const remaining = remainingToRefund(payment, refunds);
  const remaining_text = isCurrency(payment.currency) ? minorToDecimal(remaining, payment.currency) : String(remaining);
  let form: Html | string = '';
  if (model.can_refund && REFUNDABLE.includes(payment.status)) {
    form =
      remaining > 0
        ? html`<form method="post" action="/dashboard/payments/${payment.id}/refunds" class="filters" id="refund-form">${csrfField(context)}<input type="hidden" name="_key" value="${formKey()}">
<div><label for="refund-amount">${t('refund_amount')} (${payment.currency})</label><input id="refund-amount" name="amount" inputmode="decimal" size="10" value="${values['amount'] ?? remaining_text}" aria-describedby="refund-hint"></div>
<div><label for="refund-reason">${t('refund_reason')}</label><select id="refund-reason" name="reason"><option value="">—</option>${REFUND_REASONS.map((reason) => html`<option value="${reason}"${reason === values['reason'] ? html` selected` : ''}>${wordOf(REFUND_REASON_WORDS, reason, lang)}</option>`)}</select></div>
<div><label for="refund-funding">${t('refund_funding')}</label><select id="refund-funding" name="funding">${REFUND_FUNDINGS.map((funding) => html`<option value="${funding}"${funding === values['funding'] ? html` selected` : ''}>${wordOf(FUNDING_WORDS, funding, lang)}</option>`)}</select></div>
<div><button type="submit" id="create-refund">${t('create_refund')}</button></div></form><p id="refund-hint">${t('refund_amount_hint', { amount: money(remaining, payment.currency) })}</p>`
        : html`<p id="nothing-to-refund">${t('nothing_to_refund')}</p>`;
  }
  const rows = refundRows(context, refunds, false);
  return html`<section class="card" id="refunds"><h2>${t('payment_refunds')}</h2>${form}
<table class="cards"><thead><tr><th class="num">${t('amount')}</th><th>${t('status')}</th><th>${t('refund_reason')}</th><th>${t('id')}</th><th>${t('created')}</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="5">${t('none')}</td></tr>`}</tbody></table></section>`;
}

export interface RefundsFilter {
  status?: string | undefined;
  payment_id?: string | undefined;
}

export function refundsPage(
  context: PageContext,
  model: { filter: RefundsFilter; refunds: RefundView[]; next_cursor: string | null; cursor?: string | undefined },
): string {
  const { t } = context;
  const { filter } = model;
  const kept = { status: filter.status, payment_id: filter.payment_id };
  const rows = refundRows(context, model.refunds, true);
  return page(context, {
    title: t('refunds'),
    section: 'refunds',
    body: html`<h1>${t('refunds')}</h1>
<section class="card"><form method="get" action="/dashboard/refunds" class="filters" role="search">
<div><label for="status">${t('status')}</label><select id="status" name="status"><option value="">—</option>${REFUND_STATUSES.map((status) => html`<option value="${status}"${status === filter.status ? html` selected` : ''}>${wordOf(STATUS_WORDS, status, context.lang)}</option>`)}</select></div>
${filter.payment_id ? html`<input type="hidden" name="payment_id" value="${filter.payment_id}">` : ''}
<div><button type="submit">${t('filter')}</button></div></form></section>
<section class="card"><table id="refunds" class="cards"><thead><tr><th class="num">${t('amount')}</th><th>${t('status')}</th><th>${t('refund_reason')}</th><th>${t('id')}</th><th>${t('payment')}</th><th>${t('created')}</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="6">${t('none')}</td></tr>`}</tbody></table>
<p>${model.cursor ? html`<a href="/dashboard/refunds${query(kept)}">${t('first_page')}</a> ` : ''}${model.next_cursor ? html`<a id="next-page" href="/dashboard/refunds${query({ ...kept, cursor: model.next_cursor })}">${t('next_page')}</a>` : ''}</p></section>`,
  });
}

export function refundDetailPage(
  context: PageContext,
  model: {
    refund: RefundView;
    qr_data_url: string | null;
    can_move_money: boolean;
    notice?: string | undefined;
    error?: string | undefined;
  },
): string {
  const { t, lang } = context;
  const { refund } = model;
  const ended = refund.status === 'succeeded' || refund.status === 'failed' || refund.status === 'canceled';
  const claim =
    !ended && model.qr_data_url
      ? html`<section class="card" id="claim"><h2>${t('claim_link')}</h2><p>${t('refund_claim_note')}</p>${copyField(context, 'claim-url', refund.claim_url)}
<p><img class="qr" id="claim-qr" src="${model.qr_data_url}" alt="${t('claim_qr')}" width="200" height="200"></p>${refund.next_action ? html`<p>${t('claim_expires')}: ${when(context, refund.next_action.expires_at)}</p>` : ''}</section>`
      : '';
  const proof =
    model.can_move_money && takesProof(refund)
      ? html`<form method="post" action="/dashboard/refunds/${refund.id}/proof" enctype="multipart/form-data" class="filters" id="proof-form">${csrfField(context)}<div><label for="refund-proof">${t('refund_proof')}</label><input id="refund-proof" name="proof" type="file" accept="image/jpeg,image/png,image/webp,image/heic" required></div><div><button type="submit" id="upload-proof">${t('upload_proof')}</button></div></form>`
      : '';
  const cancel =
    model.can_move_money && cancellable(refund)
      ? html`<form method="post" action="/dashboard/refunds/${refund.id}/cancel" class="filters" id="cancel-form">${csrfField(context)}<div><input type="checkbox" id="confirm-cancel" name="confirm" value="yes" required><label for="confirm-cancel">${t('confirm_cancel_refund')}</label></div><button type="submit" class="danger" id="cancel-refund">${t('cancel_refund')}</button></form>`
      : '';
  const destination = refund.destination_details
    ? `${refund.destination_details.bank_name ?? refund.destination_details.rail} ${refund.destination_details.masked}`
    : '—';
  return page(context, {
    title: `${t('refund')} ${refund.id}`,
    section: 'refunds',
    body: html`<p><a href="/dashboard/refunds">← ${t('refunds')}</a></p><h1>${t('refund')} ${money(refund.amount, refund.currency)}</h1>${flash(model.notice)}${flash(model.error, 'error')}
<div class="grid"><section class="card"><dl class="fields">
<dt>${t('id')}</dt><dd class="mono" id="refund-id">${refund.id}</dd>
<dt>${t('status')}</dt><dd id="refund-status">${statusBadge(context, refund.status)}</dd>
<dt>${t('amount')}</dt><dd>${money(refund.amount, refund.currency)}</dd>
<dt>${t('payment')}</dt><dd class="mono"><a id="refund-payment" href="/dashboard/payments/${refund.payment_id}">${refund.payment_id}</a></dd>
<dt>${t('refund_reason')}</dt><dd>${refund.reason ? wordOf(REFUND_REASON_WORDS, refund.reason, lang) : '—'}</dd>
<dt>${t('refund_funding')}</dt><dd id="refund-funding">${wordOf(FUNDING_WORDS, refund.funding, lang)}</dd>
${refund.amount_micro_pay !== null ? html`<dt>${t('pay_held')}</dt><dd>${pay(refund.amount_micro_pay)}</dd>` : ''}
<dt>${t('destination')}</dt><dd class="mono" id="refund-destination">${destination}</dd>
<dt>${t('proof_status')}</dt><dd id="refund-proof-status">${refund.proof ? statusBadge(context, refund.proof.status) : '—'}</dd>
${refund.failure_reason ? html`<dt>${t('failure_reason')}</dt><dd class="mono">${refund.failure_reason}</dd>` : ''}
${refund.receipt_url ? html`<dt>${t('refund_receipt')}</dt><dd><a id="refund-receipt" href="${refund.receipt_url}" target="_blank" rel="noopener">${t('refund_receipt')}</a></dd>` : ''}
<dt>${t('created')}</dt><dd>${when(context, refund.created_at)}</dd>
</dl>${proof}${cancel}</section>${claim}</div>`,
  });
}
