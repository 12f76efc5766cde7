import { defineStateMachine, mover } from '../../db/state-machine.ts';
import type { SettlementStatus } from './tables.ts';

/**
 * Every allowed move of a settlement batch. A run makes a batch `pending` and completes it in the same transaction;
 * `completed` -> `failed` is an operator reporting that the payout came back from the merchant's bank (as a Stripe
 * payout can fail after it was paid), and `failed` -> `completed` is the operator's retry.
 */
export const SETTLEMENT_TRANSITIONS: Record<SettlementStatus, readonly SettlementStatus[]> = {
  pending: ['completed', 'failed'],
  completed: ['failed'],
  failed: ['completed'],
};

export const SETTLEMENT_STATES = defineStateMachine({
  table: 'settlements',
  noun: 'settlement',
  moves: SETTLEMENT_TRANSITIONS,
  entered_at: { completed: 'completed_at', failed: 'failed_at' },
  conflict: 'SETTLEMENT_BAD_STATE',
});

/** One move of a batch through the shared state machine: a concurrent move loses with 409 SETTLEMENT_BAD_STATE. */
export const transitionSettlement = mover(SETTLEMENT_STATES);
