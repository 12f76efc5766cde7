
import type { Trx } from '../../db/database.ts';
import { AppError } from '../../lib/errors.ts';
import type { PaymentRow, PaymentStatus } from './tables.ts';

/** Every allowed move of a payment, in one place. */
export const PAYMENT_TRANSITIONS: Record<PaymentStatus, readonly PaymentStatus[]> = {
  created: ['matching', 'cancelled', 'expired'],
  matching: ['matched', 'cancelled', 'expired'],
  matched: ['payment_pending', 'confirming', 'expired', 'failed', 'completed'],
  payment_pending: ['confirming', 'expired', 'failed', 'completed'],
  confirming: ['completed', 'failed'],
  completed: ['settled'],
  failed: [],
  expired: [],
  cancelled: [],
  settled: [],
};

export const OPEN_FOR_PROOF: readonly PaymentStatus[] = ['matched', 'payment_pending'];
export const CANCELLABLE: readonly PaymentStatus[] = ['created', 'matching'];

const TIMESTAMP_OF: Partial<Record<PaymentStatus, keyof PaymentRow>> = {
  matched: 'matched_at',
  confirming: 'confirming_at',
  completed: 'completed_at',
  failed: 'failed_at',
  expired: 'expired_at',
  cancelled: 'cancelled_at',
  settled: 'settled_at',
};

/**
 * Applies one move with `UPDATE ... WHERE status = <from>`, so a concurrent move loses cleanly with 409
 * PAYMENT_BAD_STATE instead of overwriting state.
 */
export async function transition(
  trx: Trx,
  payment: Pick<PaymentRow, 'id' | 'status'>,
  to: PaymentStatus,
  at: Date,
  patch: Partial<Pick<PaymentRow, 'failure_reason' | 'checkout_opened_at' | 'settlement_id'>> = {},
): Promise<PaymentRow> {
  if (!PAYMENT_TRANSITIONS[payment.status].includes(to)) {
    throw new AppError('PAYMENT_BAD_STATE', `A ${payment.status} payment cannot become ${to}`);
  }
  const stamp = TIMESTAMP_OF[to];
  const updated = await trx
    .updateTable('payments')
    .set({ status: to, ...patch, ...(stamp ? { [stamp]: at } : {}) })
    .where('id', '=', payment.id)
    .where('status', '=', payment.status)
    .returningAll()
    .executeTakeFirst();
  if (!updated) throw new AppError('PAYMENT_BAD_STATE', `Payment ${payment.id} changed status concurrently`);
  return updated;
}

/** Locks a payment row for the rest of the transaction. */
export async function lockPayment(trx: Trx, id: string): Promise<PaymentRow | undefined> {
  return trx.selectFrom('payments').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export const isDue = (payment: Pick<PaymentRow, 'status' | 'expires_at'>, now: Date): boolean =>
  OPEN_FOR_PROOF.includes(payment.status) && payment.expires_at.getTime() <= now.getTime();

