import type { CheckoutLeg, CheckoutView } from './view.ts';
import { documentHead, escapeHtml, scriptJson } from '../../http/html.ts';
import { fill, type Lang } from '../../http/language.ts';
import { STRINGS, type Strings } from './i18n.ts';

/** What the page renders: the shared checkout view-model plus the inline QR images and the language. */
export interface PageModel {
  view: CheckoutView;
  lang: Lang;
  /** match_order -> data: URL of the leg's PromptPay QR PNG (inlined: the page needs no other request). */
  qr_data_urls: Map<number, string>;
  nonce: string;
  error?: string | undefined;
  /** How often the page asks for the status, and how long the success view waits before returning the buyer. */
  poll_ms: number;
  redirect_delay_ms: number;
}

/** The hosted pages' look (the checkout, and the payment-link and receipt pages that share it). */
export const CSS = `
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans Thai","Sarabun",sans-serif;background:#f3f5f8;color:#1b2430}
main{max-width:480px;margin:0 auto;padding:16px}header{display:flex;justify-content:space-between;align-items:center;margin-bottom:12px}
.brand{font-weight:700;font-size:18px}.lang{font-size:14px;color:#2451b3;text-decoration:none;border:1px solid #c9d3e6;border-radius:16px;padding:2px 12px;background:#fff}
.card{background:#fff;border-radius:14px;padding:18px;margin-bottom:14px;box-shadow:0 1px 3px rgba(20,30,50,.08)}
.sandbox{background:#fff4d6;color:#7a5300;border-radius:10px;padding:8px 12px;font-size:14px;margin-bottom:12px}
.label{color:#5b6778;font-size:14px}.amount{font-size:34px;font-weight:700;letter-spacing:.5px;margin:2px 0}
.order{color:#5b6778;font-size:14px;word-break:break-all}.countdown{font-variant-numeric:tabular-nums;font-weight:600;font-size:20px}
.countdown.low{color:#b3261e}.leg h2{font-size:16px;margin:0 0 8px}.leg .legamount{font-size:24px;font-weight:700}
.qr{display:block;width:100%;max-width:280px;height:auto;margin:10px auto;image-rendering:pixelated;border:1px solid #e3e8ef;border-radius:8px}
dl{display:grid;grid-template-columns:auto 1fr;gap:4px 12px;margin:8px 0 0}dt{color:#5b6778;font-size:14px}dd{margin:0;font-weight:600;word-break:break-all}
.note{font-size:14px;color:#5b6778}input[type=file]{display:block;width:100%;margin:10px 0;padding:10px;border:1px dashed #9fb0cc;border-radius:10px;background:#f8faff}
button,.button{display:block;width:100%;text-align:center;border:0;border-radius:10px;padding:14px;font-size:17px;font-weight:600;background:#2451b3;color:#fff;text-decoration:none;cursor:pointer}
.status{text-align:center}.status h1{font-size:22px;margin:8px 0}.icon{font-size:48px}.error{background:#fde7e6;color:#8c1d18;border-radius:10px;padding:10px 12px;margin-bottom:12px}
.legstate{margin:10px 0 0;font-weight:600}.legstate.verified{color:#1d6b34}.legstate.rejected{color:#8c1d18}.legstate.checking{color:#2451b3}
.legform{margin-top:12px;border-top:1px solid #e3e8ef;padding-top:10px}
.spinner{width:40px;height:40px;margin:8px auto;border:4px solid #dbe3f1;border-top-color:#2451b3;border-radius:50%;animation:spin 1s linear infinite}@keyframes spin{to{transform:rotate(360deg)}}
`;

function layout(
  model: Pick<PageModel, 'lang' | 'nonce'>,
  title: string,
  toggle_href: string | null,
  body: string,
  script: string,
): string {
  const t = STRINGS[model.lang];
  return `${documentHead({ lang: model.lang, title, head: `<style>${CSS}</style>`, personal: true })}
<body>
<main>
<header><span class="brand">mpay</span>${toggle_href ? `<a class="lang" href="${escapeHtml(toggle_href)}" hreflang="${model.lang === 'th' ? 'en' : 'th'}">${t.other_lang}</a>` : ''}</header>
${body}
</main>
${script ? `<script nonce="${model.nonce}">${script}</script>` : ''}
</body>
</html>`;
}

export function money(amount_decimal: string, currency: string): string {
  return `${currency === 'THB' ? '฿' : ''}${amount_decimal} ${currency}`;
}

function legCard(
  t: Strings,
  leg: CheckoutLeg,
  count: number,
  currency: string,
  qr: string | undefined,
  footer = '',
): string {
  const heading = count > 1 ? `<h2>${escapeHtml(fill(t.part, { n: leg.match_order, m: count }))}</h2>` : '';
  const amount = money(leg.amount_decimal, currency);
  let details: string;
  const payee = leg.payee;
  if (payee.type === 'promptpay') {
    details = `<div class="note">${t.scan}</div>
${qr ? `<img class="qr" data-leg="${leg.match_order}" src="${qr}" width="360" height="360" alt="${escapeHtml(fill(t.qr_alt, { amount }))}">` : ''}
<dl><dt>${t.promptpay_id}</dt><dd>${escapeHtml(payee.promptpay_id)}</dd><dt>${t.account_name}</dt><dd>${escapeHtml(payee.display_name)}</dd></dl>`;
  } else if (payee.type === 'payid') {
    details = `<div class="note">${t.transfer_to}</div><dl><dt>${t.payid}</dt><dd>${escapeHtml(payee.payid)}</dd><dt>${t.account_name}</dt><dd>${escapeHtml(payee.display_name)}</dd></dl>`;
  } else {
    details = `<div class="note">${t.transfer_to}</div><dl><dt>${t.bank}</dt><dd>${escapeHtml(payee.bank_name ?? payee.bank_code)}</dd><dt>${t.account_number}</dt><dd>${escapeHtml(payee.account_number)}</dd><dt>${t.account_name}</dt><dd>${escapeHtml(payee.account_name)}</dd></dl>`;
  }
  return `<section class="card leg" data-leg="${leg.match_order}">${heading}<div class="legamount">${escapeHtml(amount)}</div>${details}<div class="note">${t.pay_exact}</div>${footer}</section>`;
}

const LEG_STATE_WORDS = {
  checking: 'leg_checking',
  verified: 'leg_verified',
  rejected: 'leg_rejected',
  not_checked: 'leg_not_checked',
  awaiting_payee: 'leg_awaiting_payee',
} as const;

/** A leg's slip state on a payment split between several payees. */
function legState(t: Strings, leg: CheckoutLeg): string {
  const state = leg.proof?.status ?? 'missing';
  const words = leg.proof ? t[LEG_STATE_WORDS[leg.proof.status]] : t.leg_missing;
  return `<p class="legstate ${state}" data-state="${state}">${t.leg_state}: ${escapeHtml(words)}</p>`;
}

/** The upload form of one leg (a payment split between payees takes one slip per payee). */
function legUpload(t: Strings, view: CheckoutView, leg: CheckoutLeg, lang: string): string {
  const n = leg.match_order;
  return `<form class="legform" id="proof-form-${n}" method="post" action="/checkout/${encodeURIComponent(view.payment_id)}/proof?lang=${lang}" enctype="multipart/form-data">
<input type="hidden" name="leg" value="${n}">
<label class="label" for="proof-${n}">${escapeHtml(fill(t.leg_upload, { n, payee: leg.payee.display_name }))}</label><input id="proof-${n}" name="proof" type="file" accept="image/jpeg,image/png,image/webp,image/heic" required>
<button type="submit" id="submit-${n}">${escapeHtml(fill(t.leg_submit, { n }))}</button></form>`;
}

/** A payment still collecting slips: matched, payment_pending, or confirming with a leg whose slip has not come. */
function collecting(view: CheckoutView): boolean {
  return (
    view.status === 'matched' ||
    view.status === 'payment_pending' ||
    (view.status === 'confirming' && view.legs.some((leg) => !leg.proof))
  );
}

function statusPoller(model: PageModel): string {
  // Reloads when the status moves; the server renders whatever the new status needs.
  const waiting = model.view.legs.some((leg) => leg.proof?.status === 'awaiting_payee');
  return `(function(){var s=${scriptJson({ url: `/checkout/${model.view.payment_id}/status`, status: model.view.status, waiting, poll_ms: model.poll_ms })};
function tick(){fetch(s.url,{cache:'no-store'}).then(function(r){return r.ok?r.json():null}).then(function(b){if(b&&b.data&&(b.data.status!==s.status||b.data.awaiting_payee!==s.waiting)){location.reload()}else{setTimeout(tick,s.poll_ms)}}).catch(function(){setTimeout(tick,s.poll_ms*2)})}
setTimeout(tick,s.poll_ms)})();`;
}

function countdownScript(seconds_remaining: number): string {
  return `(function(){var end=Date.now()+${Math.max(0, seconds_remaining)}*1000,el=document.getElementById('countdown');
function pad(n){return n<10?'0'+n:''+n}
function draw(){var left=Math.max(0,Math.round((end-Date.now())/1000));var h=Math.floor(left/3600),m=Math.floor(left%3600/60),s=left%60;
el.textContent=(h?h+':'+pad(m):m)+':'+pad(s);if(left<=60)el.className='countdown low';if(left<=0){setTimeout(function(){location.reload()},1000);return}setTimeout(draw,1000)}
draw()})();`;
}

function header(t: Strings, view: CheckoutView, with_countdown: boolean): string {
  const minutes = Math.floor(view.seconds_remaining / 60);
  const seconds = String(view.seconds_remaining % 60).padStart(2, '0');
  return `${view.is_sandbox ? `<div class="sandbox" role="note">${t.sandbox}</div>` : ''}
<section class="card">
<div class="label">${t.amount_due}</div>
<div class="amount" id="amount">${escapeHtml(money(view.amount_decimal, view.currency))}</div>
<div class="order">${t.order}: ${escapeHtml(view.order_id)}</div>
${with_countdown ? `<div class="label" style="margin-top:10px">${t.time_left}</div><div class="countdown" id="countdown" aria-live="off">${minutes}:${seconds}</div>` : ''}
</section>`;
}

function statusCard(icon: string, title: string, body: string, extra = ''): string {
  return `<section class="card status" id="status"><div class="icon" aria-hidden="true">${icon}</div><h1>${title}</h1><p>${body}</p>${extra}</section>`;
}

/** The page for every status the payment can be in. */
export function renderCheckoutPage(model: PageModel): string {
  const { view, lang } = model;
  const t = STRINGS[lang];
  const toggle = `/checkout/${encodeURIComponent(view.payment_id)}?lang=${lang === 'th' ? 'en' : 'th'}`;
  const back = `<a class="button" id="return" href="${escapeHtml(view.return_redirect_url)}">${t.back_to_shop}</a>`;
  const error = model.error
    ? `<div class="error" role="alert">${t.error_prefix}: ${escapeHtml(model.error)}</div>`
    : '';
  if (view.legs.length > 1 && collecting(view)) {
    const missing = view.legs.filter((leg) => !leg.proof).length;
    const legs = view.legs
      .map((leg) =>
        legCard(
          t,
          leg,
          view.legs.length,
          view.currency,
          leg.proof ? undefined : model.qr_data_urls.get(leg.match_order),
          leg.proof ? legState(t, leg) : legUpload(t, view, leg, lang),
        ),
      )
      .join('\n');
    const split = `<p class="note" id="split">${escapeHtml(fill(t.split_note, { m: view.legs.length }))}</p><p class="note" id="missing">${escapeHtml(fill(t.legs_missing, { k: missing, m: view.legs.length }))}</p>`;
    return layout(
      model,
      `${t.title} ${money(view.amount_decimal, view.currency)}`,
      toggle,
      `${error}${header(t, view, true)}${split}${legs}`,
      countdownScript(view.seconds_remaining) + statusPoller(model),
    );
  }
  switch (view.status) {
    case 'matched':
    case 'payment_pending': {
      const legs = view.legs
        .map((leg) => legCard(t, leg, view.legs.length, view.currency, model.qr_data_urls.get(leg.match_order)))
        .join('\n');
      const split =
        view.legs.length > 1 ? `<p class="note">${escapeHtml(fill(t.split_note, { m: view.legs.length }))}</p>` : '';
      const upload = `<section class="card"><h2 style="font-size:16px;margin:0 0 4px">${t.upload_title}</h2><div class="note">${t.upload_hint}</div>
<form id="proof-form" method="post" action="/checkout/${encodeURIComponent(view.payment_id)}/proof?lang=${lang}" enctype="multipart/form-data">
<label class="label" for="proof">${t.choose_file}</label><input id="proof" name="proof" type="file" accept="image/jpeg,image/png,image/webp,image/heic" required>
<button type="submit" id="submit">${t.submit}</button></form></section>`;
      return layout(
        model,
        `${t.title} ${money(view.amount_decimal, view.currency)}`,
        toggle,
        `${error}${header(t, view, true)}${split}${legs}${upload}`,
        countdownScript(view.seconds_remaining) + statusPoller(model),
      );
    }
    case 'confirming': {
      const states =
        view.legs.length > 1
          ? view.legs
              .map(
                (leg) =>
                  `<div data-leg="${leg.match_order}">${escapeHtml(fill(t.part, { n: leg.match_order, m: view.legs.length }))}${legState(t, leg)}</div>`,
              )
              .join('')
          : '';
      // A slip that passed the local checks waits for its seller's word (DESIGN 3b): the buyer is told so.
      const waiting = view.legs.some((leg) => leg.proof?.status === 'awaiting_payee');
      const title = waiting ? t.awaiting_payee_title : t.confirming_title;
      return layout(
        model,
        title,
        toggle,
        `${error}${header(t, view, false)}${statusCard('<div class="spinner"></div>', title, waiting ? t.awaiting_payee_body : t.confirming_body, states)}`,
        statusPoller(model),
      );
    }
    case 'partially_paid':
      return layout(
        model,
        t.partially_paid_title,
        toggle,
        `${header(t, view, false)}${statusCard(
          '⚠️',
          t.partially_paid_title,
          fill(t.partially_paid_body, {
            received: money(view.amount_received_decimal, view.currency),
            amount: money(view.amount_decimal, view.currency),
          }),
          back,
        )}`,
        '',
      );
    case 'completed':
    case 'settled':
      return layout(
        model,
        t.completed_title,
        toggle,
        `${header(t, view, false)}${statusCard('✅', t.completed_title, t.completed_body, back)}`,
        `setTimeout(function(){location.href=${scriptJson(view.return_redirect_url)}},${model.redirect_delay_ms});`,
      );
    case 'failed':
      return layout(
        model,
        t.failed_title,
        toggle,
        `${header(t, view, false)}${statusCard('⚠️', t.failed_title, t.failed_body, `${view.failure_reason ? `<p class="note">${t.reason}: ${escapeHtml(view.failure_reason)}</p>` : ''}${back}`)}`,
        '',
      );
    case 'expired':
      return layout(
        model,
        t.expired_title,
        toggle,
        `${error}${header(t, view, false)}${statusCard('⌛', t.expired_title, t.expired_body, back)}`,
        '',
      );
    case 'cancelled':
      return layout(
        model,
        t.cancelled_title,
        toggle,
        `${header(t, view, false)}${statusCard('✖️', t.cancelled_title, t.cancelled_body, back)}`,
        '',
      );
    default:
      return layout(
        model,
        t.preparing_title,
        toggle,
        `${header(t, view, false)}${statusCard('<div class="spinner"></div>', t.preparing_title, t.preparing_body)}`,
        statusPoller(model),
      );
  }
}

export function renderNotFoundPage(lang: Lang, nonce: string): string {
  const t = STRINGS[lang];
  return layout({ lang, nonce }, t.not_found_title, null, statusCard('🔍', t.not_found_title, t.not_found_body), '');
}
