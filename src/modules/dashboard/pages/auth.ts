import { html } from '../html.ts';
import { csrfField, flash, page, type PageContext } from '../layout.ts';
import { PASSWORD_MIN_LENGTH } from '../users.ts';

export function signInPage(
  context: PageContext,
  options: { error?: string | undefined; email?: string | undefined; notice?: string | undefined } = {},
): string {
  const { t } = context;
  return page(context, {
    title: t('sign_in'),
    section: null,
    body: html`<section class="card signin"><h1>${t('sign_in')}</h1>${flash(options.notice)}${flash(options.error, 'error')}
<form method="post" action="/dashboard/sign-in">
<label for="email">${t('email')}</label><input id="email" name="email" type="email" autocomplete="username" required value="${options.email ?? ''}">
<label for="password">${t('password')}</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<p><button type="submit" id="sign-in">${t('sign_in')}</button></p></form></section>`,
  });
}

export function invitePage(
  context: PageContext,
  options: { token: string; email: string | null; error?: string | undefined },
): string {
  const { t } = context;
  const body = options.email
    ? html`<section class="card signin"><h1>${t('set_password')}</h1><p>${options.email}</p>${flash(options.error, 'error')}
<form method="post" action="/dashboard/invite/${options.token}">
<label for="password">${t('new_password')}</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="${PASSWORD_MIN_LENGTH}" required>
<p><button type="submit" id="set-password">${t('set_password')}</button></p></form></section>`
    : html`<section class="card signin"><h1>${t('set_password')}</h1><div class="error" role="alert">${t('invitation_invalid')}</div></section>`;
  return page(context, { title: t('set_password'), section: null, body });
}

export function accountPage(
  context: PageContext,
  options: { error?: string | undefined; notice?: string | undefined } = {},
): string {
  const { t } = context;
  return page(context, {
    title: t('account'),
    section: 'account',
    body: html`<h1>${t('account')}</h1>${flash(options.notice)}${flash(options.error, 'error')}
<section class="card"><h2>${t('change_password')}</h2>
<form method="post" action="/dashboard/account/password">${csrfField(context)}
<input type="text" name="username" autocomplete="username" value="${context.session?.user.email ?? ''}" hidden>
<label for="current">${t('current_password')}</label><input id="current" name="current_password" type="password" autocomplete="current-password" required>
<label for="next">${t('new_password')}</label><input id="next" name="new_password" type="password" autocomplete="new-password" minlength="${PASSWORD_MIN_LENGTH}" required>
<p><button type="submit" id="change-password">${t('change_password')}</button></p></form></section>`,
  });
}
