import { documentHead, escapeHtml } from '../../http/html.ts';
import { fill, type Lang } from '../../http/language.ts';
import type { ErrorDetail } from '../../lib/errors.ts';
import type { ThaiBank } from '../reference/banks.ts';
import type { PayoutRail } from '../reference/payout-destinations.ts';
import type { ClaimView } from './claim.ts';

/** The buyer's refund page (server-rendered, no script): Thai and English, phone first. */

const EN = {
  title: 'Your refund',
  from: 'Refund from {merchant}',
  order: 'Order {order}',
  amount: 'Amount',
  sandbox: 'Sandbox: no real money moves',
  claim_intro: 'Tell {merchant} where to send your money. Choose one way below.',
  claim_until: 'This link works until {date}.',
  rail_promptpay: 'PromptPay',
  rail_thai_bank: 'Thai bank account',
  rail_payid: 'PayID',
  rail_au_bank: 'Bank account (BSB)',
  promptpay_id: 'PromptPay ID (mobile number or national ID)',
  bank: 'Bank',
  choose_bank: 'Choose your bank',
  account_number: 'Account number',
  account_name: 'Account holder name',
  payid: 'PayID (email, mobile or ABN)',
  bsb: 'BSB',
  send: 'Send my refund here',
  waiting_title: 'Your refund is on its way',
  waiting_body: '{merchant} will send {amount} to {destination}. Come back to this page to confirm when it arrives.',
  confirm_title: 'Did you receive your refund?',
  confirm_body: '{merchant} says it sent {amount} to {destination}. Check your account, then tell us.',
  confirm_body_network:
    '{amount} from {merchant} is being paid to {destination} by our payment partners. Check your account, then tell us.',
  yes: 'Yes, I received it',
  no: 'No, it has not arrived',
  denied: 'You told us the money has not arrived. {merchant} has been asked to send it again.',
  succeeded_title: 'Refund complete',
  succeeded_body: '{amount} was refunded to {destination}.',
  ended_title: 'This refund is closed',
  ended_expired: 'The link expired before a destination was given. Please contact {merchant}.',
  ended_body: 'This refund was canceled or failed. Please contact {merchant}.',
  not_found_title: 'Link not found',
  not_found_body: 'Check the link you were sent, or contact the shop.',
  errors: 'Please check:',
  invalid: 'this is not valid',
  other_lang: 'ภาษาไทย',
  cross_site: 'This form must be sent from this page.',
};
type Strings = typeof EN;

const TH: Strings = {
  title: 'เงินคืนของคุณ',
  from: 'เงินคืนจาก {merchant}',
  order: 'คำสั่งซื้อ {order}',
  amount: 'จำนวนเงิน',
  sandbox: 'แซนด์บ็อกซ์: ไม่มีการโอนเงินจริง',
  claim_intro: 'แจ้ง {merchant} ว่าจะให้โอนเงินคืนไปที่ใด เลือกหนึ่งช่องทางด้านล่าง',
  claim_until: 'ลิงก์นี้ใช้ได้ถึง {date}',
  rail_promptpay: 'พร้อมเพย์',
  rail_thai_bank: 'บัญชีธนาคารไทย',
  rail_payid: 'PayID',
  rail_au_bank: 'บัญชีธนาคาร (BSB)',
  promptpay_id: 'พร้อมเพย์ (เบอร์มือถือหรือเลขบัตรประชาชน)',
  bank: 'ธนาคาร',
  choose_bank: 'เลือกธนาคาร',
  account_number: 'เลขที่บัญชี',
  account_name: 'ชื่อบัญชี',
  payid: 'PayID (อีเมล เบอร์มือถือ หรือ ABN)',
  bsb: 'BSB',
  send: 'ส่งเงินคืนมาที่นี่',
  waiting_title: 'กำลังดำเนินการคืนเงิน',
  waiting_body: '{merchant} จะโอน {amount} ไปที่ {destination} กลับมาที่หน้านี้เพื่อยืนยันเมื่อได้รับเงินแล้ว',
  confirm_title: 'คุณได้รับเงินคืนแล้วหรือยัง',
  confirm_body: '{merchant} แจ้งว่าโอน {amount} ไปที่ {destination} แล้ว กรุณาตรวจสอบบัญชีของคุณแล้วแจ้งเรา',
  confirm_body_network:
    'พันธมิตรการชำระเงินของเรากำลังโอนเงินคืน {amount} จาก {merchant} ไปที่ {destination} กรุณาตรวจสอบบัญชีของคุณแล้วแจ้งเรา',
  yes: 'ได้รับแล้ว',
  no: 'ยังไม่ได้รับ',
  denied: 'คุณแจ้งว่ายังไม่ได้รับเงิน เราได้แจ้งให้ {merchant} โอนใหม่แล้ว',
  succeeded_title: 'คืนเงินเรียบร้อย',
  succeeded_body: 'คืนเงิน {amount} ไปที่ {destination} แล้ว',
  ended_title: 'การคืนเงินนี้ปิดแล้ว',
  ended_expired: 'ลิงก์หมดอายุก่อนที่จะได้รับข้อมูลบัญชี กรุณาติดต่อ {merchant}',
  ended_body: 'การคืนเงินนี้ถูกยกเลิกหรือไม่สำเร็จ กรุณาติดต่อ {merchant}',
  not_found_title: 'ไม่พบลิงก์',
  not_found_body: 'กรุณาตรวจสอบลิงก์ที่ได้รับ หรือติดต่อร้านค้า',
  errors: 'กรุณาตรวจสอบ:',
  invalid: 'ข้อมูลไม่ถูกต้อง',
  other_lang: 'English',
  cross_site: 'ต้องส่งแบบฟอร์มนี้จากหน้านี้เท่านั้น',
};

export const CLAIM_STRINGS: Record<Lang, Strings> = { en: EN, th: TH };

const CSS = `
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans Thai","Sarabun",sans-serif;background:#f3f5f8;color:#1b2430}
main{max-width:480px;margin:0 auto;padding:16px}header{display:flex;justify-content:space-between;align-items:center;margin-bottom:12px}
.brand{font-weight:700;font-size:18px}.lang{font-size:14px;color:#2451b3;text-decoration:none;border:1px solid #c9d3e6;border-radius:16px;padding:2px 12px;background:#fff}
.card{background:#fff;border-radius:14px;padding:18px;margin-bottom:14px;box-shadow:0 1px 3px rgba(20,30,50,.08)}
.sandbox{background:#fff4d6;color:#7a5300;border-radius:10px;padding:8px 12px;font-size:14px;margin-bottom:12px}
.muted{color:#5b6778;font-size:14px}.amount{font-size:34px;font-weight:700;margin:2px 0}h1{font-size:20px;margin:0 0 6px}h2{font-size:17px;margin:0 0 10px}
label{display:block;font-size:14px;color:#3a4657;margin:10px 0 4px}input,select{display:block;width:100%;font-size:17px;padding:12px;border:1px solid #b8c3d6;border-radius:10px;background:#fff;color:#1b2430}
button{display:block;width:100%;border:0;border-radius:10px;padding:14px;margin-top:14px;font-size:17px;font-weight:600;background:#2451b3;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#8c1d18;border:1px solid #d9a19c}.error{background:#fde7e6;color:#8c1d18;border-radius:10px;padding:10px 12px;margin-bottom:12px}
.notice{background:#e8f0fe;color:#1c3f8a;border-radius:10px;padding:10px 12px;margin-bottom:12px}.icon{font-size:44px;text-align:center}
`;

export interface ClaimPageModel {
  view: ClaimView;
  lang: Lang;
  /** The page's own path (the language link adds ?lang=). */
  path: string;
  /** Where the forms post: the page's path, with the language the visitor chose. */
  action: string;
  banks: readonly ThaiBank[];
  errors?: readonly ErrorDetail[] | undefined;
  /** The buyer's last input, to fill the form again after an error. */
  form?: Record<string, string> | undefined;
}

function layout(lang: Lang, toggle_href: string | null, title: string, body: string): string {
  const t = CLAIM_STRINGS[lang];
  return `${documentHead({ lang, title, head: `<style>${CSS}</style>`, personal: true })}
<body>
<main>
<header><span class="brand">mpay</span>${toggle_href ? `<a class="lang" href="${escapeHtml(toggle_href)}" hreflang="${lang === 'th' ? 'en' : 'th'}">${t.other_lang}</a>` : ''}</header>
${body}
</main>
</body>
</html>`;
}

function money(view: ClaimView): string {
  return `${view.currency === 'THB' ? '฿' : ''}${view.amount_decimal} ${view.currency}`;
}

function destinationText(view: ClaimView, t: Strings): string {
  const d = view.destination;
  if (!d) return '';
  const rail = t[`rail_${d.rail}` as const];
  return `${rail}${d.bank_name ? ` ${d.bank_name}` : ''} ${d.masked}`;
}

function field(rail: PayoutRail, name: string, label: string, value: string, attributes = ''): string {
  const id = `${rail}-${name}`;
  return `<label for="${id}">${escapeHtml(label)}</label><input id="${id}" name="${name}" value="${escapeHtml(value)}" ${attributes}>`;
}

function railForm(model: ClaimPageModel, rail: PayoutRail): string {
  const t = CLAIM_STRINGS[model.lang];
  const chosen = model.form?.['rail'] === rail ? (model.form ?? {}) : {};
  const value = (name: string) => chosen[name] ?? '';
  let fields: string;
  if (rail === 'promptpay') {
    fields = field(
      rail,
      'promptpay_id',
      t.promptpay_id,
      value('promptpay_id'),
      'inputmode="numeric" autocomplete="tel" required',
    );
  } else if (rail === 'thai_bank') {
    const options = model.banks
      .map(
        (bank) =>
          `<option value="${escapeHtml(bank.code)}"${value('bank_code') === bank.code ? ' selected' : ''}>${escapeHtml(model.lang === 'th' ? bank.name_th : bank.name_en)}</option>`,
      )
      .join('');
    fields = `<label for="bank-${rail}">${t.bank}</label><select id="bank-${rail}" name="bank_code" required><option value="">${t.choose_bank}</option>${options}</select>
${field(rail, 'account_number', t.account_number, value('account_number'), 'inputmode="numeric" required')}
${field(rail, 'account_name', t.account_name, value('account_name'), 'autocomplete="name" required')}`;
  } else if (rail === 'payid') {
    fields = field(rail, 'payid', t.payid, value('payid'), 'autocomplete="email" required');
  } else {
    fields = `${field(rail, 'bsb', t.bsb, value('bsb'), 'inputmode="numeric" required')}
${field(rail, 'account_number', t.account_number, value('account_number'), 'inputmode="numeric" required')}
${field(rail, 'account_name', t.account_name, value('account_name'), 'autocomplete="name" required')}`;
  }
  return `<form class="card" method="post" action="${escapeHtml(model.action)}" data-rail="${rail}">
<h2>${t[`rail_${rail}` as const]}</h2>
<input type="hidden" name="action" value="destination"><input type="hidden" name="rail" value="${rail}">
${fields}
<button type="submit">${t.send}</button>
</form>`;
}

/** The label of the field a validation message names (`form.account_number`), for a message in the page's words. */
const FIELD_LABELS: Record<string, keyof Strings> = {
  promptpay_id: 'promptpay_id',
  bank_code: 'bank',
  account_number: 'account_number',
  account_name: 'account_name',
  payid: 'payid',
  bsb: 'bsb',
};

function errorText(error: ErrorDetail, t: Strings, lang: Lang): string {
  const name = error.field?.replace(/^form\./, '') ?? '';
  const label = FIELD_LABELS[name];
  if (!label) return error.message;
  return `${t[label]}: ${lang === 'en' ? error.message : t.invalid}`;
}

function dateText(date: Date, lang: Lang): string {
  return new Intl.DateTimeFormat(lang === 'th' ? 'th-TH' : 'en-GB', {
    dateStyle: 'long',
    timeStyle: 'short',
    timeZone: 'Asia/Bangkok',
  }).format(date);
}

export function renderClaimPage(model: ClaimPageModel): string {
  const { view, lang } = model;
  const t = CLAIM_STRINGS[lang];
  const slots = { merchant: view.merchant_name, amount: money(view), destination: destinationText(view, t) };
  const summary = `<section class="card">
${view.is_sandbox ? `<div class="sandbox">${t.sandbox}</div>` : ''}
<h1>${escapeHtml(fill(t.from, { merchant: view.merchant_name }))}</h1>
<div class="muted">${escapeHtml(fill(t.order, { order: view.order_id }))}</div>
<div class="muted">${t.amount}</div><div class="amount" data-amount>${escapeHtml(money(view))}</div>
</section>`;
  const errors = model.errors?.length
    ? `<div class="error" role="alert">${t.errors}<ul>${model.errors.map((error) => `<li>${escapeHtml(errorText(error, t, lang))}</li>`).join('')}</ul></div>`
    : '';
  let body: string;
  switch (view.stage) {
    case 'claim':
      body = `<p>${escapeHtml(fill(t.claim_intro, slots))} <span class="muted">${escapeHtml(fill(t.claim_until, { date: dateText(view.claim_expires_at, lang) }))}</span></p>
${errors}${view.rails.map((rail) => railForm(model, rail)).join('\n')}`;
      break;
    case 'waiting':
      body = `${view.failure_reason === 'buyer_not_received' ? `<div class="notice">${escapeHtml(fill(t.denied, slots))}</div>` : ''}<section class="card" data-stage="waiting"><h2>${t.waiting_title}</h2><p>${escapeHtml(fill(t.waiting_body, slots))}</p></section>`;
      break;
    case 'confirm':
      body = `${errors}<section class="card" data-stage="confirm"><h2>${t.confirm_title}</h2><p>${escapeHtml(fill(view.through_network ? t.confirm_body_network : t.confirm_body, slots))}</p>
<form method="post" action="${escapeHtml(model.action)}"><input type="hidden" name="action" value="received"><button type="submit">${t.yes}</button></form>
<form method="post" action="${escapeHtml(model.action)}"><input type="hidden" name="action" value="not_received"><button type="submit" class="secondary">${t.no}</button></form>
</section>`;
      break;
    case 'succeeded':
      body = `<section class="card" data-stage="succeeded"><div class="icon" aria-hidden="true">✓</div><h2>${t.succeeded_title}</h2><p>${escapeHtml(fill(t.succeeded_body, slots))}</p></section>`;
      break;
    default:
      body = `<section class="card" data-stage="ended"><h2>${t.ended_title}</h2><p>${escapeHtml(fill(view.failure_reason === 'claim_expired' ? t.ended_expired : t.ended_body, slots))}</p></section>`;
  }
  const toggle = `${model.path}?lang=${lang === 'th' ? 'en' : 'th'}`;
  return layout(lang, toggle, t.title, `${summary}\n${body}`);
}

export function renderClaimNotFound(lang: Lang, message?: string): string {
  const t = CLAIM_STRINGS[lang];
  return layout(
    lang,
    null,
    t.not_found_title,
    `<section class="card"><h1>${t.not_found_title}</h1><p>${escapeHtml(message ?? t.not_found_body)}</p></section>`,
  );
}
