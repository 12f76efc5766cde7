import type { Trx } from '../../db/database.ts';
import { AppError } from '../../lib/errors.ts';
import type { PendingFundsRow, PendingFundsStatus } from './tables.ts';

/** Every allowed move of a pending-funds row, in one place. */
export const PENDING_FUNDS_TRANSITIONS: Record<PendingFundsStatus, readonly PendingFundsStatus[]> = {
  pending_validation: ['validated_pending_receiver_confirm', 'failed', 'expired'],
  validated_pending_receiver_confirm: ['validated_pending_receiver_confirm', 'confirmed', 'failed', 'expired'],
  confirmed: [],
  failed: [],
  expired: [],
};

export const TERMINAL: readonly PendingFundsStatus[] = ['confirmed', 'failed', 'expired'];
export const AWAITING_RECEIVER: PendingFundsStatus = 'validated_pending_receiver_confirm';

const TIMESTAMP_OF: Partial<Record<PendingFundsStatus, 'validated_at' | 'confirmed_at' | 'failed_at' | 'expired_at'>> = {
  validated_pending_receiver_confirm: 'validated_at',
  confirmed: 'confirmed_at',
  failed: 'failed_at',
  expired: 'expired_at',
};

export type PendingFundsPatch = Partial<
  Pick<PendingFundsRow, 'failure_reason' | 'attempts' | 'unverified_attempts' | 'ledger_transfer_id' | 'first_receiver_attempt_at' | 'receiver_window_expires_at' | 'validator_kind' | 'intake_attempts' | 'intake_next_attempt_at' | 'intake_claimed_until'>
>;

/**
 * Applies one move with `UPDATE ... WHERE status = <from>` (staying in `validated_pending_receiver_confirm` is a
 * move too: it records an attempt). A concurrent move makes it lose cleanly with a 409.
 */
export async function transition(trx: Trx, row: Pick<PendingFundsRow, 'id' | 'status'>, to: PendingFundsStatus, at: Date, patch: PendingFundsPatch = {}): Promise<PendingFundsRow> {
  if (!PENDING_FUNDS_TRANSITIONS[row.status].includes(to)) {
    throw new AppError(TERMINAL.includes(row.status) ? 'PENDING_FUNDS_TERMINAL' : 'PENDING_FUNDS_VALIDATION_UNVERIFIED', `A ${row.status} pending-funds row cannot become ${to}`);
  }
  const stamp = to === row.status ? undefined : TIMESTAMP_OF[to];
  const updated = await trx
    .updateTable('pending_funds')
    .set({ status: to, updated_at: at, ...patch, ...(stamp ? { [stamp]: at } : {}) })
    .where('id', '=', row.id)
    .where('status', '=', row.status)
    .returningAll()
    .executeTakeFirst();
  if (!updated) throw new AppError('PENDING_FUNDS_TERMINAL', `Pending funds ${row.id} changed status concurrently`);
  return updated;
}

/** Why a row cannot take a receiver confirmation, or null when it can (rule 2 of the contract's section 4.3). */
export function refusal(row: Pick<PendingFundsRow, 'status' | 'id'>): AppError | null {
  if (row.status === AWAITING_RECEIVER) return null;
  if (TERMINAL.includes(row.status)) return new AppError('PENDING_FUNDS_TERMINAL', `Pending funds ${row.id} is ${row.status}`);
  return new AppError('PENDING_FUNDS_VALIDATION_UNVERIFIED', `Pending funds ${row.id} is ${row.status}, not validated_pending_receiver_confirm`);
}

/** The sweep's verdict for an open row at `now`: expired (TTL, no receiver action), failed (window), or null. */
export function dueMove(row: Pick<PendingFundsRow, 'status' | 'first_receiver_attempt_at' | 'expires_at' | 'receiver_window_expires_at'>, now: Date): 'expired' | 'failed' | null {
  if (TERMINAL.includes(row.status)) return null;
  if (row.first_receiver_attempt_at === null) return row.expires_at.getTime() <= now.getTime() ? 'expired' : null;
  return row.receiver_window_expires_at !== null && row.receiver_window_expires_at.getTime() <= now.getTime() ? 'failed' : null;
}

export const WINDOW_EXPIRED_REASON = 'receiver_confirm_window_expired';
export const MAX_ATTEMPTS_REASON = 'max_attempts_exceeded';
