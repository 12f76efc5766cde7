import { html, raw, type Html, type Renderable } from './html.ts';
import { documentHead } from '../../http/html.ts';
import type { Lang } from '../../http/language.ts';
import type { Translate } from './i18n.ts';
import type { DashboardSession } from './users.ts';
import { EVENT_WORDS, ROLE_WORDS, STATUS_WORDS, wordOf } from './words.ts';

export interface PageContext {
  lang: Lang;
  t: Translate;
  session: DashboardSession | null;
  /** The request's path and query, for the language switch's way back. */
  url: string;
  /** The merchant's time zone (the default before sign-in). */
  time_zone: string;
}

export type Section =
  | 'home'
  | 'payments'
  | 'refunds'
  | 'balance'
  | 'settlements'
  | 'links'
  | 'developers'
  | 'team'
  | 'settings'
  | 'account'
  | null;

const NAV: { section: Exclude<Section, null>; href: string; key: Exclude<Section, null> }[] = [
  { section: 'home', href: '/dashboard', key: 'home' },
  { section: 'payments', href: '/dashboard/payments', key: 'payments' },
  { section: 'refunds', href: '/dashboard/refunds', key: 'refunds' },
  { section: 'links', href: '/dashboard/links', key: 'links' },
  { section: 'balance', href: '/dashboard/balance', key: 'balance' },
  { section: 'settlements', href: '/dashboard/settlements', key: 'settlements' },
  { section: 'developers', href: '/dashboard/developers', key: 'developers' },
  { section: 'team', href: '/dashboard/team', key: 'team' },
  { section: 'settings', href: '/dashboard/settings', key: 'settings' },
  { section: 'account', href: '/dashboard/account', key: 'account' },
];

/** Hidden CSRF field for every form a signed-in page renders. */
export function csrfField(context: PageContext): Html {
  return html`<input type="hidden" name="_csrf" value="${context.session?.csrf_token ?? ''}">`;
}

export function flash(message: string | undefined, kind: 'flash' | 'error' = 'flash'): Html {
  if (!message) return html``;
  return kind === 'error'
    ? html`<div class="error" role="alert" id="error-message">${message}</div>`
    : html`<div class="flash" role="status">${message}</div>`;
}

/** A status in the page's words; its class keeps the API's value (colours, tests). */
export function statusBadge(context: PageContext, status: string): Html {
  return html`<span class="status status-${status}" data-status="${status}">${wordOf(STATUS_WORDS, status, context.lang)}</span>`;
}

export function eventLabel(context: PageContext, type: string): Html {
  return html`<span title="${type}">${wordOf(EVENT_WORDS, type, context.lang)}</span>`;
}

export function roleLabel(context: PageContext, role: string): string {
  return wordOf(ROLE_WORDS, role, context.lang);
}

/** htmx without eval or inline scripts, swapping only its own answers; the stylesheet. */
const HEAD = `<meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"selfRequestsOnly":true,"responseHandling":[{"code":"204","swap":false},{"code":"...","swap":true}]}'>
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">`;

export function page(
  context: PageContext,
  options: { title: string; section: Section; body: Renderable; charts?: boolean },
): string {
  const { t, session, lang } = context;
  const other = lang === 'th' ? 'en' : 'th';
  const lang_link = `/dashboard/lang?to=${other}&back=${encodeURIComponent(context.url)}`;
  const header = session
    ? html`<header class="top"><span class="brand">${t('brand')} · ${session.merchant.name}</span>
<form class="inline" method="post" action="/dashboard/mode">${csrfField(context)}<input type="hidden" name="mode" value="${session.mode === 'live' ? 'sandbox' : 'live'}">
<span>${t('mode')}: <strong id="current-mode">${t(session.mode)}</strong></span> <button type="submit" id="mode-switch">${t('switch_to', { mode: t(session.mode === 'live' ? 'sandbox' : 'live') })}</button></form>
<a href="${lang_link}" hreflang="${other}" lang="${other}">${t('language')}</a>
<form class="inline" method="post" action="/dashboard/sign-out">${csrfField(context)}<button type="submit" id="sign-out">${t('sign_out')}</button></form></header>
<nav class="main" aria-label="${t('brand')}">${NAV.map((item) => html`<a href="${item.href}"${raw(item.section === options.section ? ' aria-current="page"' : '')}>${t(item.key)}</a>`)}</nav>`
    : html`<header class="top"><span class="brand">${t('brand')}</span><a href="${lang_link}" hreflang="${other}" lang="${other}">${t('language')}</a></header>`;
  // Wide tables scroll sideways inside a keyboard-focusable box on a phone, never the page.
  const body = html`${options.body}`.value
    .replace(/<table\b/g, '<div class="table-wrap" tabindex="0"><table')
    .replace(/<\/table>/g, '</table></div>');
  const banner = session?.mode === 'sandbox' ? html`<div class="banner" role="note">${t('sandbox_banner')}</div>` : '';
  const head = documentHead({ lang, title: `${options.title} · ${t('brand')}`, head: HEAD, personal: true });
  return html`${raw(head)}
<body data-csrf="${session?.csrf_token ?? ''}">
<a class="skip" href="#main">${t('skip')}</a>
${header}
<main id="main">
${banner}
${raw(body)}
${session ? html`<p class="muted">${t('signed_in_as', { email: session.user.email, role: roleLabel(context, session.user.role) })}</p>` : ''}
</main>
<script src="/dashboard/assets/htmx.min.js"></script>
${options.charts ? html`<script src="/dashboard/assets/chart.umd.min.js"></script>` : ''}
<script src="/dashboard/assets/dashboard.js"></script>
</body>
</html>`.value;
}
