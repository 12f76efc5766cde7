import { documentHead, escapeHtml } from '../../http/html.ts';
import { fill, type Lang } from '../../http/language.ts';
import { CSS, money } from '../checkout/page.ts';
import { RECEIPT_STRINGS, type ReceiptStrings } from './i18n.ts';
import { decimal, type PaymentReceipt, type ReceiptRefund, type RefundReceipt } from './service.ts';

/** The printable receipt: phone first on screen, one clean page on paper, Thai or English. */

const RECEIPT_CSS = `${CSS}
.receipt h1{font-size:22px;margin:0 0 2px}.merchant{font-size:20px;font-weight:700;margin:0 0 6px}
.rows{display:grid;grid-template-columns:auto 1fr;gap:6px 14px;margin:12px 0 0}.rows dt{color:#5b6778;font-size:14px}.rows dd{margin:0;font-weight:600;word-break:break-all;text-align:right}
table{width:100%;border-collapse:collapse;margin-top:6px;font-size:15px;table-layout:fixed}td.ref{word-break:break-all}th,td{text-align:left;padding:6px 4px;border-bottom:1px solid #e3e8ef;vertical-align:top}th{color:#5b6778;font-weight:600;font-size:13px}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}.total{font-weight:700}
.badge{display:inline-block;border-radius:12px;padding:2px 10px;font-size:14px;font-weight:600;background:#e3f4e8;color:#1d6b34}.badge.partly{background:#fff4d6;color:#7a5300}.badge.refunded{background:#e8ecf5;color:#33404f}
h2{font-size:16px;margin:0 0 4px}.foot{font-size:13px;color:#5b6778;text-align:center;margin-top:8px;word-break:break-all}
@media print{body{background:#fff}.noprint{display:none!important}.card{box-shadow:none;border:1px solid #c9d3e6;break-inside:avoid}main{max-width:none}}
`;

const ZONES: Record<string, string> = {
  THB: 'Asia/Bangkok',
  AUD: 'Australia/Sydney',
  SGD: 'Asia/Singapore',
  USD: 'UTC',
};

/** A date and time in the currency's home time zone (Thai dates in the Buddhist era, as Thai receipts show them). */
export function receiptDate(at: Date, lang: Lang, currency: string): string {
  const time_zone = ZONES[currency] ?? 'UTC';
  const text = new Intl.DateTimeFormat(lang === 'th' ? 'th-TH' : 'en-GB', {
    dateStyle: 'long',
    timeStyle: 'short',
    timeZone: time_zone,
  }).format(at);
  return `${text} (${time_zone})`;
}

export const receiptNumber = (number: number, is_sandbox: boolean): string =>
  `${is_sandbox ? 'TEST-' : ''}${String(number).padStart(6, '0')}`;

function layout(lang: Lang, title: string, toggle_href: string | null, body: string, nonce: string): string {
  const t = RECEIPT_STRINGS[lang];
  return `${documentHead({ lang, title, head: `<style>${RECEIPT_CSS}</style>`, personal: true })}
<body>
<main>
<header class="noprint"><span class="brand">mpay</span>${toggle_href ? `<a class="lang" href="${escapeHtml(toggle_href)}" hreflang="${lang === 'th' ? 'en' : 'th'}">${t.other_lang}</a>` : ''}</header>
${body}
</main>
<script nonce="${nonce}">document.getElementById('print')&&document.getElementById('print').addEventListener('click',function(){window.print()});</script>
</body>
</html>`;
}

function statusBadge(t: ReceiptStrings, receipt: PaymentReceipt): string {
  if (receipt.refunded_minor > 0 && receipt.refunded_minor >= receipt.received_minor)
    return `<span class="badge refunded" id="receipt-status">${t.refunded}</span>`;
  if (receipt.refunded_minor > 0) return `<span class="badge refunded" id="receipt-status">${t.partly_refunded}</span>`;
  return receipt.status === 'partly_paid'
    ? `<span class="badge partly" id="receipt-status">${t.partly_paid}</span>`
    : `<span class="badge" id="receipt-status">${t.paid}</span>`;
}

function refundStatus(t: ReceiptStrings, refund: ReceiptRefund): string {
  const key = `refund_status_${refund.status}` as keyof ReceiptStrings;
  return t[key] ?? refund.status;
}

export interface ReceiptPageModel {
  receipt: PaymentReceipt;
  lang: Lang;
  token: string;
  nonce: string;
}

export function renderPaymentReceipt(model: ReceiptPageModel): string {
  const { receipt, lang } = model;
  const t = RECEIPT_STRINGS[lang];
  const c = receipt.currency;
  const show = (minor: number) => escapeHtml(money(decimal(minor, c), c));
  const number = receiptNumber(receipt.number, receipt.is_sandbox);
  const toggle = `/receipts/${encodeURIComponent(model.token)}?lang=${lang === 'th' ? 'en' : 'th'}`;
  const amounts =
    receipt.status === 'partly_paid'
      ? `<dt>${t.amount_due}</dt><dd>${show(receipt.amount_minor)}</dd><dt>${t.amount_received}</dt><dd id="received">${show(receipt.received_minor)}</dd>`
      : `<dt>${t.amount}</dt><dd id="received">${show(receipt.amount_minor)}</dd>`;
  const legs = receipt.legs
    .map(
      (leg) =>
        `<tr data-leg="${leg.match_order}"><td>${escapeHtml(fill(t.transfer, { n: leg.match_order }))}${leg.paid ? '' : ` <span class="badge partly">${t.partly_paid}</span>`}</td><td class="ref">${escapeHtml(leg.reference ?? '—')}</td><td class="num">${show(leg.amount_minor)}</td></tr>`,
    )
    .join('');
  const refunds = receipt.refunds.length
    ? `<section class="card" id="refunds"><h2>${t.refunds}</h2><table><thead><tr><th>${t.date}</th><th>${t.status}</th><th class="num">${t.amount}</th></tr></thead><tbody>${receipt.refunds
        .map(
          (refund) =>
            `<tr data-refund="${escapeHtml(refund.id)}"><td>${escapeHtml(receiptDate(refund.succeeded_at ?? refund.created_at, lang, c))}</td><td>${escapeHtml(refundStatus(t, refund))}${refund.receipt_url ? ` · <a class="noprint" href="${escapeHtml(refund.receipt_url)}?lang=${lang}">${t.refund_receipt}</a>` : ''}</td><td class="num">−${show(refund.amount_minor)}</td></tr>`,
        )
        .join('')}</tbody></table>
<dl class="rows"><dt>${t.total_refunded}</dt><dd id="refunded">${show(receipt.refunded_minor)}</dd><dt>${t.net}</dt><dd id="net" class="total">${show(receipt.received_minor - receipt.refunded_minor)}</dd></dl></section>`
    : '';
  const body = `${receipt.is_sandbox ? `<div class="sandbox" role="note">${t.sandbox}</div>` : ''}
<section class="card receipt">
<p class="merchant">${escapeHtml(receipt.merchant_name)}</p>
<h1>${t.receipt}</h1>
<div>${t.number} <strong id="receipt-number">${escapeHtml(number)}</strong> ${statusBadge(t, receipt)}</div>
<dl class="rows">
<dt>${t.date}</dt><dd>${escapeHtml(receiptDate(receipt.paid_at, lang, c))}</dd>
<dt>${t.order}</dt><dd>${escapeHtml(receipt.order_id)}</dd>
<dt>${t.method}</dt><dd>${escapeHtml(t[receipt.payment_method as 'promptpay'] ?? receipt.payment_method)}</dd>
${amounts}
</dl>
</section>
<section class="card" id="transfers"><h2>${t.transfers}</h2><table><thead><tr><th></th><th>${t.reference}</th><th class="num">${t.amount}</th></tr></thead><tbody>${legs}</tbody></table></section>
${refunds}
<p class="foot">${escapeHtml(fill(t.issued_by, { merchant: receipt.merchant_name }))}<br>${t.payment_id}: ${escapeHtml(receipt.payment_id)}</p>
<button type="button" id="print" class="noprint">${t.print}</button>`;
  return layout(lang, `${t.receipt} ${number} · ${receipt.merchant_name}`, toggle, body, model.nonce);
}

export function renderRefundReceipt(model: {
  receipt: RefundReceipt;
  lang: Lang;
  token: string;
  nonce: string;
}): string {
  const { receipt, lang } = model;
  const t = RECEIPT_STRINGS[lang];
  const c = receipt.currency;
  const show = (minor: number) => escapeHtml(money(decimal(minor, c), c));
  const toggle = `/receipts/${encodeURIComponent(model.token)}?lang=${lang === 'th' ? 'en' : 'th'}`;
  const number =
    receipt.payment.receipt_number === null ? null : receiptNumber(receipt.payment.receipt_number, receipt.is_sandbox);
  const body = `${receipt.is_sandbox ? `<div class="sandbox" role="note">${t.sandbox}</div>` : ''}
<section class="card receipt">
<p class="merchant">${escapeHtml(receipt.merchant_name)}</p>
<h1>${t.refund_receipt}</h1>
${number ? `<div id="refund-of">${escapeHtml(fill(t.refund_of, { number }))}</div>` : ''}
<dl class="rows">
<dt>${t.refund_date}</dt><dd>${escapeHtml(receiptDate(receipt.refunded_at, lang, c))}</dd>
<dt>${t.order}</dt><dd>${escapeHtml(receipt.payment.order_id)}</dd>
<dt>${t.original_payment}</dt><dd>${show(receipt.payment.amount_minor)}</dd>
<dt>${t.reference}</dt><dd>${escapeHtml(receipt.reference ?? '—')}</dd>
<dt>${t.refunded}</dt><dd id="refunded" class="total">${show(receipt.amount_minor)}</dd>
</dl>
</section>
${receipt.payment.receipt_url ? `<p class="noprint"><a href="${escapeHtml(receipt.payment.receipt_url)}?lang=${lang}" id="payment-receipt">${t.receipt} ${escapeHtml(number ?? '')}</a></p>` : ''}
<p class="foot">${escapeHtml(fill(t.issued_by, { merchant: receipt.merchant_name }))}<br>${t.payment_id}: ${escapeHtml(receipt.payment.id)}</p>
<button type="button" id="print" class="noprint">${t.print}</button>`;
  return layout(lang, `${t.refund_receipt} · ${receipt.merchant_name}`, toggle, body, model.nonce);
}

export function renderReceiptNotFound(lang: Lang, nonce: string): string {
  const t = RECEIPT_STRINGS[lang];
  return layout(
    lang,
    t.not_found_title,
    null,
    `<section class="card status"><div class="icon" aria-hidden="true">🔍</div><h1>${t.not_found_title}</h1><p>${t.not_found_body}</p></section>`,
    nonce,
  );
}
