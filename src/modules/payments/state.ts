import type { Trx } from '../../db/database.ts';
import { defineStateMachine, mover } from '../../db/state-machine.ts';
import { present } from '../../lib/assert.ts';
import type { PaymentRow, PaymentStatus } from './tables.ts';

/** Every allowed move of a payment, in one place. */
export const PAYMENT_TRANSITIONS: Record<PaymentStatus, readonly PaymentStatus[]> = {
  created: ['matching', 'cancelled', 'expired'],
  matching: ['matched', 'cancelled', 'expired'],
  matched: ['payment_pending', 'confirming', 'expired', 'failed', 'completed'],
  payment_pending: ['confirming', 'expired', 'failed', 'completed'],
  confirming: ['completed', 'partially_paid', 'failed'],
  completed: ['settled'],
  // A partly paid payment stays partially_paid when a settlement takes it (its settlement_id says so).
  partially_paid: [],
  failed: [],
  expired: [],
  cancelled: [],
  settled: [],
};

export const OPEN_FOR_PROOF: readonly PaymentStatus[] = ['matched', 'payment_pending'];
export const CANCELLABLE: readonly PaymentStatus[] = ['created', 'matching'];

export const PAYMENT_STATES = defineStateMachine({
  table: 'payments',
  noun: 'payment',
  moves: PAYMENT_TRANSITIONS,
  entered_at: {
    matched: 'matched_at',
    confirming: 'confirming_at',
    completed: 'completed_at',
    partially_paid: 'partially_paid_at',
    failed: 'failed_at',
    expired: 'expired_at',
    cancelled: 'cancelled_at',
    settled: 'settled_at',
  },
  conflict: 'PAYMENT_BAD_STATE',
});

/** One move of a payment through the shared state machine: a concurrent move loses with 409 PAYMENT_BAD_STATE. */
export const transition = mover(PAYMENT_STATES);

/** Locks a payment row for the rest of the transaction. */
export async function lockPayment(trx: Trx, id: string): Promise<PaymentRow | undefined> {
  return trx.selectFrom('payments').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Locks a payment this request has read already (rows are never deleted, so it is there). */
export async function relockPayment(trx: Trx, id: string): Promise<PaymentRow> {
  return present(await lockPayment(trx, id), `payment ${id} exists after its read (rows are never deleted)`);
}

export const isDue = (payment: Pick<PaymentRow, 'status' | 'expires_at'>, now: Date): boolean =>
  OPEN_FOR_PROOF.includes(payment.status) && payment.expires_at.getTime() <= now.getTime();
