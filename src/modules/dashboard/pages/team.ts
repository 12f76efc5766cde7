import { formKey } from '../context.ts';
import { when } from '../format.ts';
import { html, type Html } from '../html.ts';
import { csrfField, flash, page, roleLabel, statusBadge, type PageContext } from '../layout.ts';
import type { TeamMember } from '../team.ts';
import { ROLES } from '../users.ts';

export interface TeamModel {
  members: TeamMember[];
  can_manage: boolean;
  /** A fresh invitation link, shown once to the owner who made it. */
  revealed?: Html | undefined;
  notice?: string | undefined;
  error?: string | undefined;
  values?: Record<string, string> | undefined;
}

export function teamPage(context: PageContext, model: TeamModel): string {
  const { t, session } = context;
  const values = model.values ?? {};
  const roleOptions = (selected: string | undefined) =>
    ROLES.map(
      (role) =>
        html`<option value="${role}"${role === selected ? html` selected` : ''}>${roleLabel(context, role)}</option>`,
    );
  const rows = model.members.map((member) => {
    const self = member.id === session?.user.id;
    const manage = model.can_manage && !self;
    const invited = member.status === 'invited';
    return html`<tr data-user="${member.id}"><td data-label="${t('email')}">${member.email}${self ? html` <span class="muted">(${t('you')})</span>` : ''}</td>
<td data-label="${t('role')}">${
      manage && !invited
        ? html`<form method="post" action="/dashboard/team/${member.id}/role" class="filters">${csrfField(context)}<label for="role-${member.id}" class="visually-hidden">${t('role')} ${member.email}</label><select id="role-${member.id}" name="role">${roleOptions(member.role)}</select><button type="submit" class="secondary change-role">${t('change_role')}</button></form>`
        : roleLabel(context, member.role)
    }</td>
<td data-label="${t('status')}">${statusBadge(context, member.status)}${member.invitation_expires_at ? html`<br><span class="muted">${t('expires')}: ${when(context, member.invitation_expires_at)}</span>` : ''}</td>
<td data-label="${t('created')}">${when(context, member.created_at)}</td>
<td data-label="${t('actions')}">${
      manage
        ? invited
          ? html`<form method="post" action="/dashboard/team/${member.id}/resend">${csrfField(context)}<button type="submit" class="secondary resend-invitation">${t('resend_invitation')}</button></form><form method="post" action="/dashboard/team/${member.id}/remove">${csrfField(context)}<input type="hidden" name="confirm" value="yes"><button type="submit" class="danger revoke-invitation">${t('revoke_invitation')}</button></form>`
          : html`<form method="post" action="/dashboard/team/${member.id}/remove" class="filters">${csrfField(context)}<div><input type="checkbox" id="confirm-${member.id}" name="confirm" value="yes" required><label for="confirm-${member.id}">${t('confirm_remove')}</label></div><button type="submit" class="danger remove-member">${t('remove')}</button></form>`
        : ''
    }</td></tr>`;
  });
  return page(context, {
    title: t('team'),
    section: 'team',
    body: html`<h1>${t('team')}</h1>${flash(model.notice)}${flash(model.error, 'error')}${model.revealed ? html`<div class="flash" role="status" id="revealed">${model.revealed}</div>` : ''}
${model.can_manage ? '' : html`<p class="muted">${t('owners_only')}</p>`}
<section class="card"><table id="team" class="cards"><thead><tr><th>${t('email')}</th><th>${t('role')}</th><th>${t('status')}</th><th>${t('created')}</th><th>${t('actions')}</th></tr></thead><tbody>${rows}</tbody></table></section>
${
  model.can_manage
    ? html`<section class="card" id="invite"><h2>${t('invite_person')}</h2><form method="post" action="/dashboard/team/invite" class="filters">${csrfField(context)}<input type="hidden" name="_key" value="${formKey()}">
<div><label for="invite-email">${t('email')}</label><input id="invite-email" name="email" type="email" required size="28" value="${values['email'] ?? ''}"></div>
<div><label for="invite-role">${t('role')}</label><select id="invite-role" name="role">${roleOptions(values['role'] ?? 'viewer')}</select></div>
<div><button type="submit" id="invite-submit">${t('invite')}</button></div></form></section>`
    : ''
}`,
  });
}
