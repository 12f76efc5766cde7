import type { Insertable } from 'kysely';
import type { Db, Trx } from '../../db/database.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import type { MerchantTables } from './tables.ts';

/**
 * Writes of `merchant_sessions`, the merchants module's table: sessions opened by the admin route and by dashboard
 * sign-in (the dashboard module calls these), slid, switched between modes and ended.
 */
export async function insertSession(
  executor: Db | Trx,
  row: Insertable<MerchantTables['merchant_sessions']>,
): Promise<void> {
  await executor.insertInto('merchant_sessions').values(row).execute();
}

/** Pushes a session's idle deadline (each use of a dashboard session). */
export async function slideSessionIdle(executor: Db | Trx, session_id: string, idle_expires_at: Date): Promise<void> {
  await executor.updateTable('merchant_sessions').set({ idle_expires_at }).where('id', '=', session_id).execute();
}

export async function setSessionSandbox(executor: Db | Trx, session_id: string, is_sandbox: boolean): Promise<void> {
  await executor.updateTable('merchant_sessions').set({ is_sandbox }).where('id', '=', session_id).execute();
}

/** Ends one session (sign-out); an ended one stays ended. */
export async function revokeSession(executor: Db | Trx, session_id: string, at: Date): Promise<void> {
  await executor
    .updateTable('merchant_sessions')
    .set({ revoked_at: at })
    .where('id', '=', session_id)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Ends every session of a dashboard user but one (a password change keeps the session that made it). */
export async function revokeUserSessions(
  executor: Db | Trx,
  merchant_user_id: string,
  at: Date,
  except_session_id: string,
): Promise<void> {
  await executor
    .updateTable('merchant_sessions')
    .set({ revoked_at: at })
    .where('merchant_user_id', '=', merchant_user_id)
    .where('id', '<>', except_session_id)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Ends every session of a dashboard user (the person was removed from the merchant). */
export async function revokeAllUserSessions(executor: Db | Trx, merchant_user_id: string, at: Date): Promise<number> {
  const result = await executor
    .updateTable('merchant_sessions')
    .set({ revoked_at: at })
    .where('merchant_user_id', '=', merchant_user_id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * The session a token names, joined to its merchant (`m`, whose token revocation ends it); the caller joins and
 * selects what else it needs, then asks `sessionInForce`.
 */
export function sessionByToken(executor: Db | Trx, token: string) {
  return executor
    .selectFrom('merchant_sessions as s')
    .innerJoin('merchants as m', 'm.id', 's.merchant_id')
    .select([
      's.id as session_id',
      's.merchant_id',
      's.is_sandbox',
      's.expires_at',
      's.idle_expires_at',
      's.revoked_at',
      's.created_at',
      'm.tokens_not_before',
    ])
    .where('s.token_hash', '=', sha256Hex(token));
}

/** A session as the authenticator reads it: `sessionByToken`'s columns, the token hash and the user's role. */
export interface SessionForAuth {
  token_hash: string;
  session_id: string;
  merchant_id: string;
  user_id: string;
  is_sandbox: boolean;
  expires_at: Date;
  idle_expires_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
  tokens_not_before: Date | null;
  role: string | null;
}

/**
 * The sessions with these token hashes (SHA-256 of the token), in one statement; none of a removed user (removing a
 * user revokes its sessions too, and this holds without that).
 */
export async function sessionsByTokenHash(executor: Db | Trx, token_hashes: string[]): Promise<SessionForAuth[]> {
  return executor
    .selectFrom('merchant_sessions as s')
    .innerJoin('merchants as m', 'm.id', 's.merchant_id')
    .leftJoin('merchant_users as u', 'u.id', 's.merchant_user_id')
    .select([
      's.token_hash',
      's.id as session_id',
      's.merchant_id',
      's.user_id',
      's.is_sandbox',
      's.expires_at',
      's.idle_expires_at',
      's.revoked_at',
      's.created_at',
      'm.tokens_not_before',
      'u.role',
    ])
    .where('s.token_hash', 'in', token_hashes)
    .where((eb) => eb.or([eb('s.merchant_user_id', 'is', null), eb('u.removed_at', 'is', null)]))
    .execute();
}

/**
 * A session may be used until it is ended (sign-out), reaches its absolute or idle end, or the merchant's tokens are
 * revoked after it began (as on the API's JWTs).
 */
export function sessionInForce(
  session: {
    expires_at: Date;
    idle_expires_at: Date | null;
    revoked_at: Date | null;
    created_at: Date;
    tokens_not_before: Date | null;
  },
  now: Date,
): boolean {
  if (session.revoked_at !== null) return false;
  if (session.tokens_not_before && session.created_at.getTime() < session.tokens_not_before.getTime()) return false;
  return session.expires_at > now && (session.idle_expires_at === null || session.idle_expires_at > now);
}
