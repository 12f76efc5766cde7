import type { Trx } from '../../db/database.ts';
import { defineStateMachine, moveColumns, mover } from '../../db/state-machine.ts';
import { AppError } from '../../lib/errors.ts';
import { recordEvent } from '../events/outbox.ts';
import { presentPendingFunds } from './present.ts';
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

export const PENDING_FUNDS_STATES = defineStateMachine({
  table: 'pending_funds',
  noun: 'pending-funds row',
  moves: PENDING_FUNDS_TRANSITIONS,
  entered_at: {
    validated_pending_receiver_confirm: 'validated_at',
    confirmed: 'confirmed_at',
    failed: 'failed_at',
    expired: 'expired_at',
  },
  touched_at: 'updated_at',
  conflict: 'PENDING_FUNDS_TERMINAL',
  refused: (from) => (TERMINAL.includes(from) ? 'PENDING_FUNDS_TERMINAL' : 'PENDING_FUNDS_VALIDATION_UNVERIFIED'),
});

/** One move (staying in `validated_pending_receiver_confirm` is a move too: it records an attempt); a concurrent move loses with 409. */
export const transition = mover(PENDING_FUNDS_STATES);

/**
 * One move computed in memory, by `transition`'s rules (the move allowed, `updated_at` and the entered status's
 * timestamp set to `at`), for a caller that writes many rows' moves in one statement (the batched receiver-confirm)
 * and holds their locks.
 */
export function movedRow(
  row: PendingFundsRow,
  to: PendingFundsStatus,
  at: Date,
  patch: Partial<Omit<PendingFundsRow, 'id' | 'status'>>,
): PendingFundsRow {
  return { ...row, ...moveColumns(PENDING_FUNDS_STATES, row, to, at, patch) } as PendingFundsRow;
}

/** Locks a row for the rest of the transaction (it must exist). */
export async function lockPendingFunds(trx: Trx, id: string): Promise<PendingFundsRow> {
  return trx.selectFrom('pending_funds').selectAll().where('id', '=', id).forUpdate().executeTakeFirstOrThrow();
}

/** Records the row's event (`pending_funds.*`) in the outbox within the move's transaction. */
export async function emitPendingFundsEvent(trx: Trx, at: Date, row: PendingFundsRow, type: string): Promise<void> {
  await recordEvent(trx, at, {
    merchant_id: row.receiver_merchant_id,
    is_sandbox: row.is_sandbox,
    type,
    resource_type: 'pending_funds',
    resource_id: row.id,
    data: presentPendingFunds(row) as unknown as Record<string, unknown>,
  });
}

/** Why a row cannot take a receiver confirmation, or null when it can (rule 2 of the contract's section 4.3). */
export function refusal(row: Pick<PendingFundsRow, 'status' | 'id'>): AppError | null {
  if (row.status === AWAITING_RECEIVER) return null;
  if (TERMINAL.includes(row.status))
    return new AppError('PENDING_FUNDS_TERMINAL', `Pending funds ${row.id} is ${row.status}`);
  return new AppError(
    'PENDING_FUNDS_VALIDATION_UNVERIFIED',
    `Pending funds ${row.id} is ${row.status}, not validated_pending_receiver_confirm`,
  );
}

/** The sweep's verdict for an open row at `now`: expired (TTL, no receiver action), failed (window), or null. */
export function dueMove(
  row: Pick<PendingFundsRow, 'status' | 'first_receiver_attempt_at' | 'expires_at' | 'receiver_window_expires_at'>,
  now: Date,
): 'expired' | 'failed' | null {
  if (TERMINAL.includes(row.status)) return null;
  if (row.first_receiver_attempt_at === null) return row.expires_at.getTime() <= now.getTime() ? 'expired' : null;
  return row.receiver_window_expires_at !== null && row.receiver_window_expires_at.getTime() <= now.getTime()
    ? 'failed'
    : null;
}

export const WINDOW_EXPIRED_REASON = 'receiver_confirm_window_expired';
export const MAX_ATTEMPTS_REASON = 'max_attempts_exceeded';
