import { documentHead, escapeHtml } from '../../http/html.ts';
import { fill, type Lang } from '../../http/language.ts';
import { CSS, money } from '../checkout/page.ts';
import { LINK_STRINGS } from './i18n.ts';
import type { LinkState, PaymentLinkView } from './schema.ts';

/** The payment link's public page: phone first, Thai and English, a form that works without JavaScript. */

const LINK_CSS = `${CSS}
h1.title{font-size:22px;margin:4px 0 6px}.description{white-space:pre-line;color:#33404f;margin:0 0 8px}
input[type=text]{display:block;width:100%;font-size:20px;padding:12px;margin:6px 0 4px;border:1px solid #9fb0cc;border-radius:10px}
.share input{font-size:14px;padding:8px;margin:4px 0 0;color:#33404f;background:#f8faff}
.merchant{color:#5b6778;font-size:15px;font-weight:600}form{margin-top:12px}
`;

export interface LinkPageModel {
  link: PaymentLinkView;
  merchant_name: string;
  lang: Lang;
  /** data: URL of the PNG QR of the link's URL (for sharing). */
  share_qr: string;
  error?: string | undefined;
  /** The amount the payer typed, shown again with an error. */
  typed_amount?: string | undefined;
}

function layout(lang: Lang, title: string, toggle_href: string | null, body: string): string {
  const t = LINK_STRINGS[lang];
  return `${documentHead({ lang, title, head: `<style>${LINK_CSS}</style>`, personal: true })}
<body>
<main>
<header><span class="brand">mpay</span>${toggle_href ? `<a class="lang" href="${escapeHtml(toggle_href)}" hreflang="${lang === 'th' ? 'en' : 'th'}">${t.other_lang}</a>` : ''}</header>
${body}
</main>
</body>
</html>`;
}

function statusCard(icon: string, title: string, body: string): string {
  return `<section class="card status" id="status"><div class="icon" aria-hidden="true">${icon}</div><h1>${escapeHtml(title)}</h1><p>${escapeHtml(body)}</p></section>`;
}

export function renderLinkPage(model: LinkPageModel): string {
  const { link, lang } = model;
  const t = LINK_STRINGS[lang];
  const id = encodeURIComponent(link.id);
  const toggle = `/pay/${id}?lang=${lang === 'th' ? 'en' : 'th'}`;
  const error = model.error
    ? `<div class="error" role="alert">${escapeHtml(t.error_prefix)}: ${escapeHtml(model.error)}</div>`
    : '';
  const range = link.amount_range;
  const amount =
    link.amount_decimal !== null
      ? `<div class="label">${t.amount}</div><div class="amount" id="amount">${escapeHtml(money(link.amount_decimal, link.currency))}</div>`
      : range
        ? `<label class="label" for="amount-input">${escapeHtml(fill(t.your_amount, { currency: link.currency }))}</label>
<input id="amount-input" name="amount" type="text" inputmode="decimal" autocomplete="off" required value="${escapeHtml(model.typed_amount ?? '')}" aria-describedby="range">
<div class="note" id="range">${escapeHtml(fill(t.range, { min: money(range.min_decimal, link.currency), max: money(range.max_decimal, link.currency) }))}</div>`
        : '';
  const form = `<form id="pay-form" method="post" action="/pay/${id}?lang=${lang}">
${amount}
<p class="note">${t.pay_how}</p>
<button type="submit" id="continue">${t.continue}</button></form>`;
  const share = `<section class="card share" id="share"><h2 style="font-size:16px;margin:0 0 4px">${t.share_title}</h2><div class="note">${t.share_hint}</div>
<img class="qr" id="share-qr" src="${model.share_qr}" width="360" height="360" alt="${escapeHtml(t.share_qr_alt)}">
<label class="label" for="share-url">${t.link}</label><input id="share-url" type="text" readonly value="${escapeHtml(link.url)}"></section>`;
  const body = `${error}${link.is_sandbox ? `<div class="sandbox" role="note">${t.sandbox}</div>` : ''}
<section class="card">
<div class="merchant">${escapeHtml(fill(t.pay_to, { merchant: model.merchant_name }))}</div>
<h1 class="title">${escapeHtml(link.title)}</h1>
${link.description ? `<p class="description">${escapeHtml(link.description)}</p>` : ''}
${form}
</section>
${share}`;
  return layout(lang, `${link.title} · ${fill(t.pay_to, { merchant: model.merchant_name })}`, toggle, body);
}

const UNAVAILABLE = {
  used_up: ['✅', 'used_up_title', 'used_up_body'],
  expired: ['⌛', 'expired_title', 'expired_body'],
  inactive: ['✖️', 'inactive_title', 'inactive_body'],
} as const;

/** A link that takes no payment (410): says why, and shows nothing to pay. */
export function renderUnavailablePage(
  lang: Lang,
  link: Pick<PaymentLinkView, 'id' | 'title' | 'is_sandbox'>,
  state: Exclude<LinkState, 'open'>,
): string {
  const t = LINK_STRINGS[lang];
  const [icon, title, body] = UNAVAILABLE[state];
  const toggle = `/pay/${encodeURIComponent(link.id)}?lang=${lang === 'th' ? 'en' : 'th'}`;
  return layout(
    lang,
    t[title],
    toggle,
    `${link.is_sandbox ? `<div class="sandbox" role="note">${t.sandbox}</div>` : ''}<p class="merchant" style="text-align:center">${escapeHtml(link.title)}</p>${statusCard(icon, t[title], t[body])}`,
  );
}

export function renderLinkNotFoundPage(lang: Lang): string {
  const t = LINK_STRINGS[lang];
  return layout(lang, t.not_found_title, null, statusCard('🔍', t.not_found_title, t.not_found_body));
}
