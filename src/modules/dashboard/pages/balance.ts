import type { BalanceView } from '../../balance/service.ts';
import type { BuyOrderView } from '../../buy-orders/service.ts';
import type { DisputeEventView, DisputeView } from '../../disputes/service.ts';
import type { PendingFundsView } from '../../pending-funds/present.ts';
import type { SellOrderView } from '../../sell-orders/present.ts';
import { PAYOUT_RAILS, type PayoutDestination } from '../../reference/payout-destinations.ts';
import { CURRENCIES } from '../../../lib/money.ts';
import { formKey } from '../context.ts';
import { html } from '../html.ts';
import type { MessageKey } from '../i18n.ts';
import { csrfField, flash, page, type PageContext, statusBadge } from '../layout.ts';
import { money, pay, when } from '../format.ts';

export interface BalanceModel {
  balance: BalanceView | null;
  pending_funds: PendingFundsView[];
  sell_orders: SellOrderView[];
  /** The sell orders that pay refunds out: confirmed by the refund's buyer unless a provider checks the seller's slip. */
  refund_payouts: ReadonlySet<string>;
  /** The refund payouts partly paid: cancel would cut them short, so the page offers none (the server refuses it). */
  not_cancellable: ReadonlySet<string>;
  /** A seller's slip confirms a refund payout only where a provider checks it against the bank's record. */
  seller_confirms_refund_payouts: boolean;
  buy_orders: BuyOrderView[];
  disputes: DisputeView[];
  can_move_money: boolean;
  notice?: string | undefined;
  error?: string | undefined;
  /** What was typed into a refused form, kept. */
  values?: Record<string, string> | undefined;
}

const FIELDS: (keyof BalanceView)[] = [
  'available_micro_pay',
  'buffer_micro_pay',
  'net_obligation_micro_pay',
  'deficit_micro_pay',
  'apr_bps',
  'entry_fee_usd',
  'countdown_days',
];

function fieldValue(context: PageContext, balance: BalanceView, field: keyof BalanceView): string {
  const value = balance[field];
  if (value === null) return '—';
  if (field.endsWith('_micro_pay')) return `${pay(value as number)} PAY`;
  // Basis points as a percentage: 1250 bps is 12.5 % a year.
  if (field === 'apr_bps') return context.t('per_year', { rate: String(Number(value) / 100) });
  if (field === 'entry_fee_usd') return `${value} USD`;
  return context.t('days', { n: Number(value) });
}

const DESTINATION_FIELDS = ['promptpay_id', 'bank_code', 'account_number', 'account_name', 'payid', 'bsb'] as const;

/** A payout destination in one line: the rail's own words and numbers. */
function destinationText(destination: PayoutDestination): string {
  switch (destination.rail) {
    case 'promptpay':
      return `PromptPay ${destination.promptpay_id}`;
    case 'thai_bank':
      return `${destination.bank_name} ${destination.account_number} (${destination.account_name})`;
    case 'payid':
      return `PayID ${destination.payid}`;
    default:
      return `BSB ${destination.bsb} ${destination.account_number} (${destination.account_name})`;
  }
}

export function balancePage(context: PageContext, model: BalanceModel): string {
  const { t } = context;
  // Only the refused form gets its values back (the sell and buy forms share field names).
  const of = (form: string): Record<string, string | undefined> =>
    model.values?.['_form'] === form ? model.values : {};
  const sell = of('sell');
  const buy = of('buy');
  const dispute = of('dispute');
  const money_form = model.can_move_money;
  const key = () => html`<input type="hidden" name="_key" value="${formKey()}">`;
  const pending = model.pending_funds.map(
    (
      row,
    ) => html`<tr><td class="mono">${row.id}</td><td class="num">${pay(row.amount_minor)} PAY</td><td>${statusBadge(context, row.status)}</td><td>${row.payer_reference}</td><td>${when(context, row.created_at)}</td>
<td>${money_form && row.status === 'validated_pending_receiver_confirm' ? html`<form method="post" action="/dashboard/pending-funds/${row.id}/confirm" enctype="multipart/form-data">${csrfField(context)}<label for="receipt-${row.id}">${t('receipt')}</label><input id="receipt-${row.id}" name="receipt" type="file" accept="image/jpeg,image/png,image/webp,application/pdf" required> <button type="submit" class="confirm-pending">${t('confirm_receipt')}</button></form>` : ''}</td></tr>`,
  );
  const sells = model.sell_orders.map(
    (
      order,
    ) => html`<tr><td class="mono">${order.id}</td><td class="num">${pay(order.amount_micro_pay)} PAY</td><td class="num">${money(order.target_fiat_amount, order.target_currency)}</td><td>${order.payout_destination ? destinationText(order.payout_destination) : '—'}</td><td>${statusBadge(context, order.status)}</td><td>${when(context, order.created_at)}</td><td>
${money_form && order.status === 'pending' && !model.not_cancellable.has(order.id) ? html`<form method="post" action="/dashboard/sell-orders/${order.id}/cancel">${csrfField(context)}${key()}<button type="submit" class="danger cancel-sell">${t('cancel')}</button></form>` : ''}
${money_form && order.status === 'cash_leg_in_flight' && model.refund_payouts.has(order.id) && !model.seller_confirms_refund_payouts ? html`<p class="hint refund-payout-confirm">${t('refund_payout_buyer_confirms')}</p>` : ''}
${money_form && order.status === 'cash_leg_in_flight' && (!model.refund_payouts.has(order.id) || model.seller_confirms_refund_payouts) ? html`<form method="post" action="/dashboard/sell-orders/${order.id}/confirm" enctype="multipart/form-data">${csrfField(context)}${key()}<label for="evidence-${order.id}">${t('receipt')}</label><input id="evidence-${order.id}" name="receipt" type="file" required><label for="ref-${order.id}">${t('reference')}</label><input id="ref-${order.id}" name="reference" size="12"> <button type="submit">${t('confirm_cash_leg')}</button></form>` : ''}</td></tr>`,
  );
  const buys = model.buy_orders.map(
    (
      order,
    ) => html`<tr><td class="mono">${order.id}</td><td class="num">${pay(order.amount_micro_pay)} PAY</td><td class="num">${money(order.fiat_amount, order.fiat_currency)}</td><td>${order.fills.map(
      (fill) =>
        html`<div class="fill">${money(fill.fiat_amount, fill.fiat_currency)} → ${fill.pay_to ? html`${fill.pay_to.display_name}, ${destinationText(fill.pay_to.destination)}` : '—'}, ${t('reference')} <span class="mono">${fill.reference}</span>${fill.qr_url ? html` <a href="${fill.qr_url}">${t('show_qr')}</a>` : ''}</div>`,
    )}</td><td>${statusBadge(context, order.status)}</td><td>${when(context, order.created_at)}</td><td>
${money_form && order.status === 'pending' ? html`<form method="post" action="/dashboard/buy-orders/${order.id}/cancel">${csrfField(context)}${key()}<button type="submit" class="danger">${t('cancel')}</button></form>` : ''}</td></tr>`,
  );
  const disputes = model.disputes.map(
    (dispute) =>
      html`<tr><td class="mono"><a href="/dashboard/disputes/${dispute.id}">${dispute.id}</a></td><td class="mono">${dispute.sell_order_id}</td><td>${statusBadge(context, dispute.kind)}</td><td>${statusBadge(context, dispute.status)}</td><td>${when(context, dispute.created_at)}</td></tr>`,
  );
  const currency_options = (selected: string | undefined) =>
    CURRENCIES.map((currency) => html`<option${currency === selected ? html` selected` : ''}>${currency}</option>`);
  return page(context, {
    title: t('balance'),
    section: 'balance',
    body: html`<h1>${t('balance')}</h1>${flash(model.notice)}${flash(model.error, 'error')}
<section class="card"><h2>${t('balance_fields')}</h2><dl class="fields" id="balance-fields">${FIELDS.map(
      (field) =>
        html`<dt>${t(`balance_label_${field}` as MessageKey)}</dt><dd><strong>${model.balance ? fieldValue(context, model.balance, field) : '—'}</strong><br><span class="muted">${t(`balance_help_${field}` as MessageKey)}</span></dd>`,
    )}</dl></section>
<section class="card" id="pending-funds"><h2>${t('pending_funds')}</h2><table><thead><tr><th>${t('id')}</th><th class="num">${t('amount')}</th><th>${t('status')}</th><th>${t('reference')}</th><th>${t('created')}</th><th>${t('actions')}</th></tr></thead><tbody>${pending.length ? pending : html`<tr><td colspan="6">${t('none')}</td></tr>`}</tbody></table></section>
<section class="card" id="sell-orders"><h2>${t('sell_orders')}</h2>
${
  money_form
    ? html`<form method="post" action="/dashboard/sell-orders" class="filters">${csrfField(context)}${key()}
<div><label for="sell-amount">${t('amount_pay')}</label><input id="sell-amount" name="amount_pay" inputmode="decimal" required size="10" value="${sell['amount_pay'] ?? ''}"></div>
<div><label for="sell-currency">${t('target_currency')}</label><select id="sell-currency" name="target_currency">${currency_options(sell['target_currency'])}</select></div>
<div><label for="sell-fiat">${t('target_amount')}</label><input id="sell-fiat" name="target_amount" inputmode="decimal" required size="10" value="${sell['target_amount'] ?? ''}"></div>
<div><label for="sell-rail">${t('payout_rail')}</label><select id="sell-rail" name="payout_rail"><option value="">${t('payout_default')}</option>${PAYOUT_RAILS.map((rail) => html`<option${rail === sell['payout_rail'] ? html` selected` : ''}>${rail}</option>`)}</select></div>
${DESTINATION_FIELDS.map((field) => html`<div><label for="sell-${field}">${t(field)}</label><input id="sell-${field}" name="${field}" size="14" value="${sell[field] ?? ''}"></div>`)}
<div><button type="submit" id="create-sell">${t('create_sell_order')}</button></div></form>`
    : ''
}
<table id="sell-order-table"><thead><tr><th>${t('id')}</th><th class="num">PAY</th><th class="num">${t('target_amount')}</th><th>${t('paid_to')}</th><th>${t('status')}</th><th>${t('created')}</th><th>${t('actions')}</th></tr></thead><tbody>${sells.length ? sells : html`<tr><td colspan="7">${t('none')}</td></tr>`}</tbody></table></section>
<section class="card" id="buy-orders"><h2>${t('buy_orders')}</h2>
${
  money_form
    ? html`<form method="post" action="/dashboard/buy-orders" class="filters">${csrfField(context)}${key()}
<div><label for="buy-amount">${t('amount_pay')}</label><input id="buy-amount" name="amount_pay" inputmode="decimal" required size="10" value="${buy['amount_pay'] ?? ''}"></div>
<div><label for="buy-currency">${t('currency')}</label><select id="buy-currency" name="fiat_currency">${currency_options(buy['fiat_currency'])}</select></div>
<div><label for="buy-fiat">${t('fiat_amount')}</label><input id="buy-fiat" name="fiat_amount" inputmode="decimal" required size="10" value="${buy['fiat_amount'] ?? ''}"></div>
<div><button type="submit" id="create-buy">${t('create_buy_order')}</button></div></form>`
    : ''
}
<table id="buy-order-table"><thead><tr><th>${t('id')}</th><th class="num">PAY</th><th class="num">${t('fiat_amount')}</th><th>${t('pay_to')}</th><th>${t('status')}</th><th>${t('created')}</th><th>${t('actions')}</th></tr></thead><tbody>${buys.length ? buys : html`<tr><td colspan="7">${t('none')}</td></tr>`}</tbody></table></section>
<section class="card" id="disputes"><h2>${t('disputes')}</h2>
${
  money_form
    ? html`<form method="post" action="/dashboard/disputes" class="filters">${csrfField(context)}${key()}
<div><label for="dispute-order">${t('sell_order_id')}</label><input id="dispute-order" name="sell_order_id" required size="36" value="${dispute['sell_order_id'] ?? ''}"></div>
<div><label for="dispute-notes">${t('notes')}</label><input id="dispute-notes" name="notes" required size="30" value="${dispute['notes'] ?? ''}"></div>
<div><button type="submit">${t('open_dispute')}</button></div></form>`
    : ''
}
<table><thead><tr><th>${t('id')}</th><th>${t('sell_order_id')}</th><th>${t('kind')}</th><th>${t('status')}</th><th>${t('created')}</th></tr></thead><tbody>${disputes.length ? disputes : html`<tr><td colspan="5">${t('none')}</td></tr>`}</tbody></table></section>`,
  });
}

const OPENER_WORDS = {
  buyer: 'opened_by_buyer',
  seller: 'opened_by_seller',
  gateway: 'opened_by_gateway',
} as const satisfies Record<DisputeView['opened_by'], MessageKey>;

export function disputePage(
  context: PageContext,
  dispute: DisputeView & {
    events: DisputeEventView[];
    evidence: { content_type: string; created_at: Date } | null;
  },
): string {
  const { t } = context;
  return page(context, {
    title: t('disputes'),
    section: 'balance',
    body: html`<p><a href="/dashboard/balance#disputes">← ${t('disputes')}</a></p><h1>${t('disputes')}</h1>
<section class="card"><dl class="fields"><dt>${t('id')}</dt><dd class="mono">${dispute.id}</dd><dt>${t('status')}</dt><dd>${statusBadge(context, dispute.status)}</dd><dt>${t('kind')}</dt><dd>${statusBadge(context, dispute.kind)}</dd><dt>${t('opened_by')}</dt><dd>${t(OPENER_WORDS[dispute.opened_by])}</dd><dt>${t('evidence')}</dt><dd>${dispute.evidence ? html`${t('evidence_attached')} (<span class="mono">${dispute.evidence.content_type}</span>, ${when(context, dispute.evidence.created_at.toISOString())})` : t('evidence_none')}</dd><dt>${t('notes')}</dt><dd>${dispute.notes}</dd><dt>${t('outcome')}</dt><dd>${dispute.outcome ? statusBadge(context, dispute.outcome) : '—'}</dd></dl></section>
<section class="card"><h2>${t('events')}</h2><ol>${dispute.events.map((event) => html`<li>${when(context, event.created_at)} · ${statusBadge(context, event.action)} → ${statusBadge(context, event.to_status)} ${event.notes ?? ''}</li>`)}</ol></section>`,
  });
}
