import { can, sendPage } from '../context.ts';
import { fieldNotOneOf, timeZoneUnknown } from '../errors.ts';
import { isTimeZone, when } from '../format.ts';
import { requireField } from '../forms.ts';
import { html } from '../html.ts';
import { settingsPage } from '../pages/settings.ts';
import { teamPage, type TeamModel } from '../pages/team.ts';
import { noticeOf, redirect, type PageRouter, type Signed } from '../routing.ts';
import { setTimeZone } from '../settings.ts';
import type { DashboardRole } from '../tables.ts';
import { changeTeamRole, inviteTeamMember, listTeam, removeTeamMember, resendInvitation } from '../team.ts';
import { ROLES } from '../users.ts';

function roleField(form: Record<string, string>): DashboardRole {
  const role = ROLES.find((candidate) => candidate === form['role']);
  if (!role) throw fieldNotOneOf('role', ROLES);
  return role;
}

/** The team (owners manage it; everyone sees it) and the merchant's settings. */
export function teamRoutes({ deps, get, post }: PageRouter): void {
  const view = async (signed: Signed, extra: Partial<TeamModel> = {}) =>
    teamPage(signed.context, {
      members: await listTeam(deps.users, signed.scope.merchant_id),
      can_manage: can(signed.session, 'team'),
      ...extra,
    });
  const again = async (signed: Signed, error: string) => view(signed, { error, values: signed.form });
  const invitation = (
    signed: Signed,
    invited: { user: { email: string }; invitation_url: string; invitation_expires_at: string },
  ) =>
    html`${signed.context.t('invitation_link', { email: invited.user.email, until: when(signed.context, invited.invitation_expires_at) })} <span class="secret" id="invitation-url">${invited.invitation_url}</span>`;

  get('/dashboard/team', 'Team: the people of the merchant, their roles and invitations', {}, async (signed) =>
    sendPage(signed.reply, await view(signed, { notice: noticeOf(signed.context, signed.request.query) })),
  );

  post(
    '/dashboard/team/invite',
    'Invite a person (owner); the one-time link is shown to the owner',
    { permission: 'team', on_error: again },
    async (signed) => {
      const email = requireField(signed.form, 'email').slice(0, 320);
      const invited = await inviteTeamMember(deps.users, signed.session, { email, role: roleField(signed.form) });
      return sendPage(signed.reply, await view(signed, { revealed: invitation(signed, invited) }), 201);
    },
  );

  post(
    '/dashboard/team/:id/role',
    "Change a person's role (owner); it applies at their next request",
    { permission: 'team', on_error: again },
    async (signed) => {
      await changeTeamRole(deps.users, signed.session, signed.id, roleField(signed.form));
      return sendPage(signed.reply, await view(signed, { notice: signed.context.t('role_changed') }));
    },
  );

  post(
    '/dashboard/team/:id/remove',
    'Remove a person or revoke an invitation (owner); their sessions end at once',
    { permission: 'team', on_error: again, confirm: true },
    async (signed) => {
      const members = await listTeam(deps.users, signed.scope.merchant_id);
      const { sessions_ended } = await removeTeamMember(deps.users, signed.session, signed.id);
      const email = members.find((member) => member.id === signed.id)?.email ?? '';
      return sendPage(
        signed.reply,
        await view(signed, { notice: signed.context.t('removed', { email, n: sessions_ended }) }),
      );
    },
  );

  post(
    '/dashboard/team/:id/resend',
    'A new invitation link for a person who has not accepted yet (owner)',
    { permission: 'team', on_error: again },
    async (signed) => {
      const invited = await resendInvitation(deps.users, signed.session, signed.id);
      return sendPage(signed.reply, await view(signed, { revealed: invitation(signed, invited) }));
    },
  );

  const settings = (signed: Signed, extra: { notice?: string | undefined; error?: string | undefined } = {}) =>
    settingsPage(signed.context, {
      time_zone: signed.context.time_zone,
      can_edit: can(signed.session, 'team'),
      ...extra,
    });

  get('/dashboard/settings', "Settings: the merchant's time zone", {}, async (signed) =>
    sendPage(signed.reply, settings(signed, { notice: noticeOf(signed.context, signed.request.query) })),
  );

  post(
    '/dashboard/settings',
    "Change the merchant's time zone (owner)",
    { permission: 'team', on_error: async (signed, error) => settings(signed, { error }) },
    async (signed) => {
      const time_zone = requireField(signed.form, 'time_zone');
      if (!isTimeZone(time_zone)) throw timeZoneUnknown();
      await setTimeZone(deps.users, signed.scope.merchant_id, time_zone);
      return redirect(signed.reply, '/dashboard/settings?notice=done');
    },
  );
}
