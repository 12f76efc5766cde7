import { randomBytes, randomUUID, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { Db, Trx } from '../../db/database.ts';
import { iso } from '../../http/schemas.ts';
import type { Clock } from '../../lib/clock.ts';
import { hmacSha256Hex, randomBase62, sha256Hex } from '../../lib/crypto.ts';
import { notFound } from '../../lib/errors.ts';
import { DEFAULT_TIME_ZONE } from './format.ts';
import type { InvitedUser } from './schema.ts';
import type { DashboardRole } from './tables.ts';
import { present } from '../../lib/assert.ts';
import {
  insertSession,
  revokeSession,
  revokeUserSessions,
  sessionByToken,
  sessionInForce,
  setSessionSandbox,
  slideSessionIdle,
} from '../merchants/sessions.ts';
import type { SignInThrottle } from '../../http/sign-in-throttle.ts';
import { currentPasswordWrong, invitationInvalid, passwordTooLong, passwordTooShort, userExists } from './errors.ts';

/**
 * Dashboard people and their sessions. Passwords: scrypt (node:crypto) with a per-user salt. Invitations, sessions
 * and CSRF tokens are random values stored only as SHA-256 hashes (the CSRF token is derived from the session token,
 * so it needs no storage and dies with the session).
 */
export interface UsersDeps {
  db: Db;
  clock: Clock;
  public_base_url: string;
  /** Failed sign-ins per address, per (email, address) and per email; none where the dashboard is not served. */
  sign_in?: SignInThrottle;
}

export const ROLES: readonly DashboardRole[] = ['owner', 'developer', 'finance', 'viewer'];
export const INVITATION_TTL_MS = 72 * 3600 * 1000;
/** A session ends after this long without a request, and in any case this long after sign-in. */
export const SESSION_IDLE_MS = 30 * 60 * 1000;
export const SESSION_ABSOLUTE_MS = 12 * 3600 * 1000;
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 200;

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 };

function scrypt(password: string, salt: Buffer, options: ScryptOptions & { keylen: number }): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCallback(password.normalize('NFKC'), salt, options.keylen, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await scrypt(password, Buffer.from(salt, 'base64'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    keylen: expected.length,
  });
  return timingSafeEqual(key, expected);
}

/** Spends the same scrypt time on an unknown email as on a known one, so timing does not reveal which emails exist. */
const DUMMY_HASH = hashPassword(randomBase62(24));

function checkPassword(password: string): void {
  if (password.length < PASSWORD_MIN_LENGTH) throw passwordTooShort(PASSWORD_MIN_LENGTH);
  if (password.length > PASSWORD_MAX_LENGTH) throw passwordTooLong(PASSWORD_MAX_LENGTH);
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * Invites a person to a merchant; the answer carries the one-time invitation link (shown only here). An email that
 * already has a user is 409 MERCHANT_USER_EXISTS, except a person removed from this same merchant: the same row gets a
 * new invitation, no password. `record` runs in the same transaction (the Team page's audit entry).
 */
export async function inviteUser(
  deps: UsersDeps,
  merchant_id: string,
  input: { email: string; role: DashboardRole },
  record?: (trx: Trx, invited: { user_id: string; email: string; now: Date }) => Promise<void>,
): Promise<InvitedUser> {
  const now = deps.clock.now();
  const email = normalizeEmail(input.email);
  const { columns, ...link } = newInvitation(deps, now);
  const id = await deps.db.transaction().execute(async (trx) => {
    const merchant = await trx.selectFrom('merchants').select('id').where('id', '=', merchant_id).executeTakeFirst();
    if (!merchant) throw notFound('Merchant');
    const existing = await trx
      .selectFrom('merchant_users')
      .select(['id', 'merchant_id', 'removed_at'])
      .where('email', '=', email)
      .forUpdate()
      .executeTakeFirst();
    let user_id: string;
    if (existing) {
      if (existing.removed_at === null || existing.merchant_id !== merchant_id) throw userExists(email);
      user_id = existing.id;
      await trx
        .updateTable('merchant_users')
        .set({
          ...columns,
          role: input.role,
          removed_at: null,
          password_hash: null,
          password_changed_at: null,
          failed_attempts: 0,
          first_failed_at: null,
          locked_until: null,
        })
        .where('id', '=', user_id)
        .execute();
    } else {
      user_id = randomUUID();
      const inserted = await trx
        .insertInto('merchant_users')
        .values({ ...columns, id: user_id, merchant_id, email, role: input.role, created_at: now })
        // Two concurrent invitations of one email: the unique index decides, and the loser gets the same 409.
        .onConflict((oc) => oc.column('email').doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) throw userExists(email);
    }
    await record?.(trx, { user_id, email, now });
    return user_id;
  });
  return { user: { id, merchant_id, email, role: input.role, status: 'invited', created_at: iso(now) }, ...link };
}

/** A fresh invitation: the one-time token (only its hash is stored), when it ends, and the link that carries it. */
export function newInvitation(deps: UsersDeps, now: Date) {
  const token = randomBase62(43);
  const expires_at = new Date(now.getTime() + INVITATION_TTL_MS);
  return {
    columns: { invitation_token_hash: sha256Hex(token), invitation_expires_at: expires_at },
    invitation_url: `${deps.public_base_url}/dashboard/invite/${token}`,
    invitation_expires_at: iso(expires_at),
  };
}

export async function findInvitation(deps: UsersDeps, token: string): Promise<{ id: string; email: string } | null> {
  const row = await deps.db
    .selectFrom('merchant_users')
    .select(['id', 'email', 'invitation_expires_at'])
    .where('invitation_token_hash', '=', sha256Hex(token))
    .executeTakeFirst();
  if (!row?.invitation_expires_at || row.invitation_expires_at.getTime() <= deps.clock.now().getTime()) return null;
  return { id: row.id, email: row.email };
}

/** Sets the password from an invitation; the token works once (cleared in the same UPDATE that checks it). */
export async function acceptInvitation(deps: UsersDeps, token: string, password: string): Promise<{ user_id: string }> {
  checkPassword(password);
  const password_hash = await hashPassword(password);
  const now = deps.clock.now();
  const updated = await deps.db
    .updateTable('merchant_users')
    .set({ password_hash, password_changed_at: now, invitation_token_hash: null, invitation_expires_at: null })
    .where('invitation_token_hash', '=', sha256Hex(token))
    .where('invitation_expires_at', '>', now)
    .returning('id')
    .executeTakeFirst();
  if (!updated) throw invitationInvalid();
  return { user_id: updated.id };
}

export type SignInResult =
  | { ok: true; user_id: string }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'limited'; retry_after_seconds: number };

/**
 * Checks an email and password under the sign-in throttle (http/sign-in-throttle.ts): refused per address and per
 * (email, address) after repeated failures, delayed per email, and never a lock on the account itself. An unknown
 * email costs the same scrypt time and gets the same answers as a wrong password.
 */
export async function checkSignIn(
  deps: UsersDeps,
  email: string,
  password: string,
  address: string,
): Promise<SignInResult> {
  const normalized = normalizeEmail(email);
  const attempt = (await deps.sign_in?.attempt(address, normalized)) ?? {
    refused: false as const,
    delay_ms: 0,
    settle: async () => {},
  };
  if (attempt.refused) return { ok: false, reason: 'limited', retry_after_seconds: attempt.retry_after_seconds };
  if (attempt.delay_ms > 0) await new Promise((resolve) => setTimeout(resolve, attempt.delay_ms));
  const candidate = await deps.db
    .selectFrom('merchant_users')
    .select(['id', 'password_hash'])
    .where('email', '=', normalized)
    .where('removed_at', 'is', null)
    .executeTakeFirst();
  const matches = await verifyPassword(
    password.slice(0, PASSWORD_MAX_LENGTH * 4),
    candidate?.password_hash ?? (await DUMMY_HASH),
  );
  const succeeded = matches && candidate !== undefined && candidate.password_hash !== null;
  await attempt.settle(succeeded);
  return succeeded ? { ok: true, user_id: candidate.id } : { ok: false, reason: 'invalid' };
}

export interface DashboardSession {
  session_id: string;
  user: { id: string; email: string; role: DashboardRole };
  merchant: { id: string; name: string; time_zone: string };
  mode: 'live' | 'sandbox';
  csrf_token: string;
}

/** The CSRF synchronizer token of a session: derived from the session's secret, so it changes with every session. */
export function csrfTokenFor(session_token: string): string {
  return hmacSha256Hex(session_token, 'mpay-dashboard-csrf');
}

/** Opens a session after a successful sign-in: the token is the cookie value, stored hashed. */
export async function openSession(deps: UsersDeps, user_id: string): Promise<{ token: string; expires_at: Date }> {
  const now = deps.clock.now();
  const user = await deps.db
    .selectFrom('merchant_users')
    .select(['id', 'merchant_id'])
    .where('id', '=', user_id)
    .executeTakeFirstOrThrow();
  const token = randomBase62(48);
  const expires_at = new Date(now.getTime() + SESSION_ABSOLUTE_MS);
  await insertSession(deps.db, {
    id: randomUUID(),
    token_hash: sha256Hex(token),
    merchant_id: user.merchant_id,
    user_id: user.id,
    merchant_user_id: user.id,
    is_sandbox: false,
    expires_at,
    idle_expires_at: new Date(now.getTime() + SESSION_IDLE_MS),
    created_at: now,
  });
  return { token, expires_at };
}

/**
 * Resolves a dashboard cookie: a signed-in user's session that is not revoked, not past its absolute end and not
 * idle too long. Each use pushes the idle deadline forward (never past the absolute end).
 */
export async function resumeSession(deps: UsersDeps, token: string): Promise<DashboardSession | null> {
  const now = deps.clock.now();
  const row = await sessionByToken(deps.db, token)
    .innerJoin('merchant_users as u', 'u.id', 's.merchant_user_id')
    .leftJoin('dashboard_settings as d', 'd.merchant_id', 's.merchant_id')
    .select(['u.id as user_id', 'u.email', 'u.role', 'u.removed_at', 'm.name as merchant_name', 'd.time_zone'])
    .executeTakeFirst();
  // The role is read here on every request, so a changed role applies at the next one; a removed person has no session.
  if (!row || row.removed_at !== null || !sessionInForce(row, now)) return null;
  const idle = new Date(Math.min(now.getTime() + SESSION_IDLE_MS, row.expires_at.getTime()));
  await slideSessionIdle(deps.db, row.session_id, idle);
  return {
    session_id: row.session_id,
    user: { id: row.user_id, email: row.email, role: row.role },
    merchant: { id: row.merchant_id, name: row.merchant_name, time_zone: row.time_zone ?? DEFAULT_TIME_ZONE },
    mode: row.is_sandbox ? 'sandbox' : 'live',
    csrf_token: csrfTokenFor(token),
  };
}

export async function setSessionMode(deps: UsersDeps, session_id: string, mode: 'live' | 'sandbox'): Promise<void> {
  await setSessionSandbox(deps.db, session_id, mode === 'sandbox');
}

export async function signOut(deps: UsersDeps, session_id: string): Promise<void> {
  await revokeSession(deps.db, session_id, deps.clock.now());
}

/** Changes the password after checking the current one; every other session of the user ends. */
export async function changePassword(
  deps: UsersDeps,
  session: DashboardSession,
  current: string,
  next: string,
): Promise<void> {
  checkPassword(next);
  const row = await deps.db
    .selectFrom('merchant_users')
    .select('password_hash')
    .where('id', '=', session.user.id)
    .executeTakeFirstOrThrow();
  if (!row.password_hash || !(await verifyPassword(current, row.password_hash))) throw currentPasswordWrong();
  const password_hash = await hashPassword(next);
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('merchant_users')
      .set({ password_hash, password_changed_at: now })
      .where('id', '=', session.user.id)
      .execute();
    await revokeUserSessions(trx, session.user.id, now, session.session_id);
  });
}

/** Creates an active user with a password at once (the first start's demo user; tests). */
export async function createActiveUser(
  deps: UsersDeps,
  merchant_id: string,
  input: { email: string; role: DashboardRole; password: string },
): Promise<{ user_id: string }> {
  const invited = await inviteUser(deps, merchant_id, input);
  const token = present(invited.invitation_url.split('/').pop(), 'an invitation URL ends with its token');
  return acceptInvitation(deps, token, input.password);
}
