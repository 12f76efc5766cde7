import type { Insertable } from 'kysely';
import type { Db, Trx } from '../../db/database.ts';
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
