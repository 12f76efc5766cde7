import type { Trx } from '../../db/database.ts';
import { iso } from '../../http/schemas.ts';
import { recordAdminAction } from '../audit/service.ts';
import { revokeAllUserSessions } from '../merchants/sessions.ts';
import { lastOwner, memberNotFound, notYourself } from './errors.ts';
import type { InvitedUser, MerchantUserView } from './schema.ts';
import type { DashboardRole } from './tables.ts';
import { inviteUser, newInvitation, type DashboardSession, type UsersDeps } from './users.ts';

/**
 * The team of a merchant, managed by its owners: invite, change a role, remove a person, resend or revoke an
 * invitation. The role is read on every request (resumeSession), so a change applies at the person's next request;
 * removing a person ends every session of theirs in the same transaction. Each change is one row of the audit trail.
 */

export interface TeamMember extends MerchantUserView {
  invitation_expires_at: string | null;
}

export async function listTeam(deps: UsersDeps, merchant_id: string): Promise<TeamMember[]> {
  const rows = await deps.db
    .selectFrom('merchant_users')
    .select(['id', 'merchant_id', 'email', 'role', 'password_hash', 'invitation_expires_at', 'created_at'])
    .where('merchant_id', '=', merchant_id)
    .where('removed_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    merchant_id: row.merchant_id,
    email: row.email,
    role: row.role,
    status: row.password_hash ? 'active' : 'invited',
    created_at: iso(row.created_at),
    invitation_expires_at: row.password_hash || !row.invitation_expires_at ? null : iso(row.invitation_expires_at),
  }));
}

const audit = (
  trx: Trx,
  owner: DashboardSession,
  at: Date,
  action: string,
  target_id: string,
  details: Record<string, unknown>,
) =>
  recordAdminAction(trx, {
    at,
    actor: { actor_user_id: owner.user.id, actor_role: `merchant_${owner.user.role}` },
    action,
    target_type: 'merchant_user',
    target_id,
    details: { merchant_id: owner.merchant.id, ...details },
  });

/** A member of the owner's merchant, locked for the change (another merchant's or a removed person is not found). */
async function lockMember(trx: Trx, owner: DashboardSession, user_id: string) {
  const row = await trx
    .selectFrom('merchant_users')
    .selectAll()
    .where('id', '=', user_id)
    .where('merchant_id', '=', owner.merchant.id)
    .where('removed_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
  if (!row) throw memberNotFound();
  return row;
}

/**
 * Locks the merchant's active owners, always first and in id order, so that two owners changing each other at once
 * queue instead of deadlocking; the caller checks that another owner remains before it demotes or removes one.
 */
async function lockOwners(trx: Trx, merchant_id: string): Promise<string[]> {
  const owners = await trx
    .selectFrom('merchant_users')
    .select('id')
    .where('merchant_id', '=', merchant_id)
    .where('role', '=', 'owner')
    .where('removed_at', 'is', null)
    .where('password_hash', 'is not', null)
    .orderBy('id')
    .forUpdate()
    .execute();
  return owners.map((owner) => owner.id);
}

/** The merchant keeps at least one active owner: the last one can be neither removed nor given another role. */
function assertAnotherOwner(owners: string[], user_id: string): void {
  if (!owners.some((id) => id !== user_id)) throw lastOwner();
}

export async function inviteTeamMember(
  deps: UsersDeps,
  owner: DashboardSession,
  input: { email: string; role: DashboardRole },
): Promise<InvitedUser> {
  return inviteUser(deps, owner.merchant.id, input, (trx, { user_id, email, now }) =>
    audit(trx, owner, now, 'merchant_user.invited', user_id, { email, role: input.role }),
  );
}

export async function changeTeamRole(
  deps: UsersDeps,
  owner: DashboardSession,
  user_id: string,
  role: DashboardRole,
): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const owners = await lockOwners(trx, owner.merchant.id);
    // The acting owner may have lost the role in a transaction that committed while this one waited.
    if (!owners.includes(owner.user.id)) throw lastOwner();
    const member = await lockMember(trx, owner, user_id);
    if (member.role === role) return;
    if (member.role === 'owner') assertAnotherOwner(owners, user_id);
    await trx.updateTable('merchant_users').set({ role }).where('id', '=', user_id).execute();
    await audit(trx, owner, now, 'merchant_user.role_changed', user_id, {
      email: member.email,
      from: member.role,
      to: role,
    });
  });
}

/** Removes a person (or revokes a pending invitation): no sign-in from now on, and every session of theirs ends. */
export async function removeTeamMember(
  deps: UsersDeps,
  owner: DashboardSession,
  user_id: string,
): Promise<{ sessions_ended: number }> {
  if (user_id === owner.user.id) throw notYourself();
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const owners = await lockOwners(trx, owner.merchant.id);
    if (!owners.includes(owner.user.id)) throw lastOwner();
    const member = await lockMember(trx, owner, user_id);
    if (member.role === 'owner') assertAnotherOwner(owners, user_id);
    await trx
      .updateTable('merchant_users')
      .set({ removed_at: now, invitation_token_hash: null, invitation_expires_at: null })
      .where('id', '=', user_id)
      .execute();
    const sessions_ended = await revokeAllUserSessions(trx, user_id, now);
    const action = member.password_hash ? 'merchant_user.removed' : 'merchant_user.invitation_revoked';
    await audit(trx, owner, now, action, user_id, { email: member.email, role: member.role, sessions_ended });
    return { sessions_ended };
  });
}

/** A new invitation link for a person who has not accepted yet (the old link stops working). */
export async function resendInvitation(
  deps: UsersDeps,
  owner: DashboardSession,
  user_id: string,
): Promise<InvitedUser> {
  const now = deps.clock.now();
  const { columns, ...link } = newInvitation(deps, now);
  return deps.db.transaction().execute(async (trx) => {
    const member = await lockMember(trx, owner, user_id);
    if (member.password_hash) throw memberNotFound();
    await trx.updateTable('merchant_users').set(columns).where('id', '=', user_id).execute();
    await audit(trx, owner, now, 'merchant_user.invitation_resent', user_id, { email: member.email });
    return {
      user: {
        id: member.id,
        merchant_id: member.merchant_id,
        email: member.email,
        role: member.role,
        status: 'invited' as const,
        created_at: iso(member.created_at),
      },
      ...link,
    };
  });
}
