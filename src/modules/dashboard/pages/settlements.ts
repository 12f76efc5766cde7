import type { SettlementDetail } from '../../settlements/service.ts';
import type { SettlementPaymentView, SettlementView } from '../../settlements/present.ts';
import { html } from '../html.ts';
import { page, type PageContext, statusBadge } from '../layout.ts';
import { money, when } from '../format.ts';

export function settlementsPage(context: PageContext, model: { settlements: SettlementView[] }): string {
  const { t } = context;
  const rows = model.settlements.map(
    (
      batch,
    ) => html`<tr><td class="mono"><a href="/dashboard/settlements/${batch.id}">${batch.id}</a></td><td>${statusBadge(context, batch.status)}</td><td class="num">${batch.payment_count}</td><td class="num">${money(batch.gross_minor, batch.currency)}</td><td class="num">${money(batch.fee_minor, batch.currency)}</td><td class="num">${money(batch.net_minor, batch.currency)}</td><td>${when(context, batch.created_at)}</td>
<td><a href="/dashboard/settlements/${batch.id}/export.csv" class="download-csv" download>${t('download_csv')}</a></td></tr>`,
  );
  return page(context, {
    title: t('settlements'),
    section: 'settlements',
    body: html`<h1>${t('settlements')}</h1><section class="card"><table id="settlements"><thead><tr><th>${t('batch')}</th><th>${t('status')}</th><th class="num">${t('count')}</th><th class="num">${t('gross')}</th><th class="num">${t('fee')}</th><th class="num">${t('net')}</th><th>${t('created')}</th><th>CSV</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="8">${t('none')}</td></tr>`}</tbody></table></section>`,
  });
}

export function settlementDetailPage(
  context: PageContext,
  model: { settlement: SettlementDetail; payments: SettlementPaymentView[] },
): string {
  const { t } = context;
  const batch = model.settlement;
  const adjustments = batch.adjustments.length
    ? html`<p>${batch.adjustments.map((adjustment) => html`${money(adjustment.amount_minor, batch.currency)} (${adjustment.reason}) `)}</p>`
    : '';
  return page(context, {
    title: `${t('batch')} ${batch.id}`,
    section: 'settlements',
    body: html`<p><a href="/dashboard/settlements">← ${t('settlements')}</a></p><h1>${t('batch')} ${batch.currency}</h1>
<section class="card"><dl class="fields"><dt>${t('id')}</dt><dd class="mono">${batch.id}</dd><dt>${t('status')}</dt><dd>${statusBadge(context, batch.status)}</dd>
<dt>${t('fee')}</dt><dd id="fee-arithmetic">${t('fee_arithmetic', { gross: money(batch.gross_minor, batch.currency), fee: money(batch.fee_minor, batch.currency), bps: batch.fee_bps, net: money(batch.net_minor, batch.currency) })}</dd></dl>${adjustments}
<p><a class="button" href="/dashboard/settlements/${batch.id}/export.csv" id="download-csv" download>${t('download_csv')}</a></p></section>
<section class="card"><table><thead><tr><th>${t('id')}</th><th>${t('order_id')}</th><th class="num">${t('gross')}</th><th class="num">${t('fee')}</th><th class="num">${t('net')}</th></tr></thead><tbody>
${model.payments.map((item) => html`<tr><td class="mono"><a href="/dashboard/payments/${item.payment_id}">${item.payment_id}</a></td><td>${item.order_id}</td><td class="num">${money(item.amount_minor, item.currency)}</td><td class="num">${money(item.fee_minor, item.currency)}</td><td class="num">${money(item.net_minor, item.currency)}</td></tr>`)}</tbody></table></section>`,
  });
}
