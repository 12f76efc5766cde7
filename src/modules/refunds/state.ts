import type { Executor, Trx } from '../../db/database.ts';
import { defineStateMachine, mover } from '../../db/state-machine.ts';
import { OWNERSHIP, owned } from '../../http/ownership.ts';
import type { MerchantScope } from '../../http/principal.ts';
import type { RefundRow, RefundStatus } from './tables.ts';

/**
 * Every allowed move of a refund (Stripe's statuses): the buyer names a destination (`requires_action` -> `pending`),
 * the money arrives (`succeeded`) or does not (`failed`), or the merchant or the claim link's expiry ends it
 * (`canceled`). A `pending` refund whose slip the buyer denies stays `pending` (a move that stays, for its event).
 */
export const REFUND_TRANSITIONS: Record<RefundStatus, readonly RefundStatus[]> = {
  requires_action: ['pending', 'canceled', 'failed'],
  pending: ['pending', 'succeeded', 'failed', 'canceled'],
  succeeded: [],
  failed: [],
  canceled: [],
};

/** Before the money moved: what the merchant may still cancel. */
export const CANCELLABLE: readonly RefundStatus[] = ['requires_action', 'pending'];
/** Refunds that count against what the payment received. */
export const COUNTED: readonly RefundStatus[] = ['requires_action', 'pending', 'succeeded'];

export const REFUND_STATES = defineStateMachine({
  table: 'refunds',
  noun: 'refund',
  moves: REFUND_TRANSITIONS,
  entered_at: {
    pending: 'destination_at',
    succeeded: 'succeeded_at',
    failed: 'failed_at',
    canceled: 'canceled_at',
  },
  conflict: 'REFUND_BAD_STATE',
});

/** One move of a refund through the shared state machine: a concurrent move loses with 409 REFUND_BAD_STATE. */
export const transition = mover(REFUND_STATES);

export async function findRefund(executor: Executor, id: string): Promise<RefundRow | undefined> {
  return executor.selectFrom('refunds').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The caller's own refund (another merchant's or mode's is 404, as a payment's is). */
export async function findOwnedRefund(executor: Executor, scope: MerchantScope, id: string): Promise<RefundRow> {
  return owned(await findRefund(executor, id), scope, OWNERSHIP.refund);
}

export async function lockRefund(trx: Trx, id: string): Promise<RefundRow | undefined> {
  return trx.selectFrom('refunds').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function lockOwnedRefund(trx: Trx, scope: MerchantScope, id: string): Promise<RefundRow> {
  return owned(await lockRefund(trx, id), scope, OWNERSHIP.refund);
}

export async function lockRefundByToken(trx: Trx, token: string): Promise<RefundRow | undefined> {
  return trx.selectFrom('refunds').selectAll().where('claim_token', '=', token).forUpdate().executeTakeFirst();
}
