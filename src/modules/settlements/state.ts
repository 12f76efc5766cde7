import type { Trx } from '../../db/database.ts';
import { AppError } from '../../lib/errors.ts';
import type { SettlementRow, SettlementStatus } from './tables.ts';

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

/** Applies one move with `UPDATE ... WHERE status = <from>`: a concurrent move loses with 409 SETTLEMENT_BAD_STATE. */
export async function transitionSettlement(
  trx: Trx,
  batch: Pick<SettlementRow, 'id' | 'status'>,
  to: SettlementStatus,
  at: Date,
  patch: Partial<Pick<SettlementRow, 'failure_reason' | 'retry_count'>> = {},
): Promise<SettlementRow> {
  if (!SETTLEMENT_TRANSITIONS[batch.status].includes(to)) {
    throw new AppError('SETTLEMENT_BAD_STATE', `A ${batch.status} settlement cannot become ${to}`);
  }
  const stamp = to === 'completed' ? { completed_at: at } : to === 'failed' ? { failed_at: at } : {};
  const updated = await trx
    .updateTable('settlements')
    .set({ status: to, ...stamp, ...patch })
    .where('id', '=', batch.id)
    .where('status', '=', batch.status)
    .returningAll()
    .executeTakeFirst();
  if (!updated) throw new AppError('SETTLEMENT_BAD_STATE', `Settlement ${batch.id} changed status concurrently`);
  return updated;
}
