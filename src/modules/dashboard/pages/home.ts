import type { BalanceView } from '../../balance/service.ts';
import type { DailyPaymentStats } from '../../payments/stats.ts';
import { html, jsonBlock } from '../html.ts';
import { page, type PageContext } from '../layout.ts';
import { money, pay } from '../format.ts';
import { present } from '../../../lib/assert.ts';

export interface HomeModel {
  today: string;
  days: string[];
  stats: DailyPaymentStats[];
  balance: BalanceView | null;
  pending_to_confirm: number;
  disputes_opened: number;
  failed_deliveries: number;
}

const COLORS = ['#1d4ba8', '#c2410c', '#15803d', '#7e22ce'];

function totals(rows: DailyPaymentStats[]) {
  const by = new Map<string, { count: number; completed: number; volume: number }>();
  for (const row of rows) {
    const total = by.get(row.currency) ?? { count: 0, completed: 0, volume: 0 };
    total.count += row.count;
    total.completed += row.completed_count;
    total.volume += row.completed_amount_minor;
    by.set(row.currency, total);
  }
  return by;
}

function rate(completed: number, count: number): string {
  return count === 0 ? '—' : `${((completed * 1000) / count / 10).toFixed(1)} %`;
}

export function homePage(context: PageContext, model: HomeModel): string {
  const { t } = context;
  const currencies = [...new Set(model.stats.map((row) => row.currency))].sort();
  const today = totals(model.stats.filter((row) => row.day === model.today));
  const month = totals(model.stats);
  const series = (value: (row: DailyPaymentStats) => number | null, empty: number | null = 0) =>
    currencies.map((currency, index) => ({
      label: currency,
      backgroundColor: COLORS[index % COLORS.length],
      borderColor: COLORS[index % COLORS.length],
      data: model.days.map((day) => {
        const row = model.stats.find((candidate) => candidate.day === day && candidate.currency === currency);
        return row ? value(row) : empty;
      }),
    }));
  const labels = model.days.map((day) => day.slice(5));
  const charts = [
    jsonBlock('chart-volume', { type: 'bar', labels, datasets: series((row) => row.completed_amount_minor / 100) }),
    jsonBlock('chart-count', { type: 'bar', labels, datasets: series((row) => row.count) }),
    jsonBlock('chart-rate', {
      type: 'line',
      labels,
      datasets: series((row) => (row.count ? Math.round((row.completed_count * 1000) / row.count) / 10 : null), null),
    }),
  ];
  const figures = currencies.length
    ? html`<table><caption class="muted">${t('today')} / ${t('last_30_days')}</caption><thead><tr><th>${t('currency')}</th><th class="num">${t('volume')} (${t('today')})</th><th class="num">${t('count')}</th><th class="num">${t('success_rate')}</th><th class="num">${t('volume')} (${t('last_30_days')})</th><th class="num">${t('count')}</th><th class="num">${t('success_rate')}</th></tr></thead><tbody>
${currencies.map((currency) => {
  const day = today.get(currency) ?? { count: 0, completed: 0, volume: 0 };
  const all = present(month.get(currency), `the month has a row for ${currency}`);
  return html`<tr><td>${currency}</td><td class="num">${money(day.volume, currency)}</td><td class="num">${day.count}</td><td class="num">${rate(day.completed, day.count)}</td><td class="num">${money(all.volume, currency)}</td><td class="num">${all.count}</td><td class="num">${rate(all.completed, all.count)}</td></tr>`;
})}</tbody></table>`
    : html`<p>${t('none')}</p>`;
  const balance = model.balance;
  const actions = [
    {
      label: t('pending_to_confirm'),
      count: model.pending_to_confirm,
      href: '/dashboard/balance#pending-funds',
      id: 'action-pending',
    },
    {
      label: t('disputes_opened'),
      count: model.disputes_opened,
      href: '/dashboard/balance#disputes',
      id: 'action-disputes',
    },
    {
      label: t('failed_deliveries'),
      count: model.failed_deliveries,
      href: '/dashboard/developers#deliveries',
      id: 'action-deliveries',
    },
  ];
  return page(context, {
    title: t('home'),
    section: 'home',
    charts: true,
    body: html`<h1>${t('home')}</h1>
<div class="grid">
<section class="card"><h2>${t('pay_balance')}</h2><div class="stat" id="pay-available">${pay(balance?.available_micro_pay ?? 0)} PAY</div>
${balance && balance.deficit_micro_pay > 0 ? html`<div class="error" role="alert" id="deficit-warning">${t('deficit_warning', { amount: pay(balance.deficit_micro_pay), days: balance.countdown_days ?? '—' })}</div>` : html`<p class="muted">${t('no_deficit')}</p>`}
<a href="/dashboard/balance">${t('balance')}</a></section>
<section class="card"><h2>${t('needs_action')}</h2><ul>${actions.map((action) => html`<li><a href="${action.href}" id="${action.id}">${action.label}: <strong>${action.count}</strong></a></li>`)}</ul></section>
</div>
<section class="card"><h2>${t('volume')} · ${t('count')} · ${t('success_rate')}</h2>${figures}</section>
<div class="grid">
<section class="card"><h2>${t('volume')} (${t('last_30_days')})</h2><div class="chart"><canvas data-chart="chart-volume" role="img" aria-label="${t('volume')} ${t('last_30_days')}"></canvas></div></section>
<section class="card"><h2>${t('count')} (${t('last_30_days')})</h2><div class="chart"><canvas data-chart="chart-count" role="img" aria-label="${t('count')} ${t('last_30_days')}"></canvas></div></section>
<section class="card"><h2>${t('success_rate')} (%)</h2><div class="chart"><canvas data-chart="chart-rate" role="img" aria-label="${t('success_rate')}"></canvas></div></section>
</div>
${charts}`,
  });
}
