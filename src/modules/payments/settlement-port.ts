import type { Executor, Trx } from '../../db/database.ts';
import { ofMerchant } from '../../http/ownership.ts';
import { transition } from './state.ts';
import type { PaymentRow, PaymentStatus } from './tables.ts';

/**
 * What the settlements module needs from payments, as functions (it never queries `payments` itself).
 * "Unsettled" means `completed` or `partially_paid` (its received amount) with no `settlement_id`.
 */

export interface SettlementGroup {
  merchant_id: string;
  is_sandbox: boolean;
  currency: string;
}

/** The (merchant, mode, currency) groups that have completed, unsettled payments completed at or before `cutoff`. */
export async function unsettledGroups(executor: Executor, cutoff: Date): Promise<SettlementGroup[]> {
  return executor
    .selectFrom('payments')
    .select(['merchant_id', 'is_sandbox', 'currency'])
    .where('status', 'in', SETTLEABLE)
    .where('settlement_id', 'is', null)
    .where('completed_at', '<=', cutoff)
    .groupBy(['merchant_id', 'is_sandbox', 'currency'])
    .orderBy('merchant_id')
    .orderBy('is_sandbox')
    .orderBy('currency')
    .execute();
}

/**
 * Locks up to `limit` completed, unsettled payments of one group for the caller's transaction. SKIP LOCKED: rows a
 * concurrent run holds are left to it, so two runs never put the same payment in two batches and never wait on
 * each other.
 */
export async function claimUnsettledPayments(
  trx: Trx,
  group: SettlementGroup,
  cutoff: Date,
  limit: number,
): Promise<PaymentRow[]> {
  return trx
    .selectFrom('payments')
    .selectAll()
    .where(ofMerchant(group))
    .where('currency', '=', group.currency)
    .where('status', 'in', SETTLEABLE)
    .where('settlement_id', 'is', null)
    .where('completed_at', '<=', cutoff)
    .orderBy('completed_at')
    .orderBy('id')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

/** Payments a settlement takes: completed ones, and partly paid ones for what they received. */
export const SETTLEABLE: readonly PaymentStatus[] = ['completed', 'partially_paid'];

/**
 * completed -> settled, recording the batch; through the payments state machine (409 PAYMENT_BAD_STATE on a race). A
 * partly paid payment keeps its status (it says what arrived) and records the batch and the time.
 */
export async function markPaymentSettled(
  trx: Trx,
  payment: Pick<PaymentRow, 'id' | 'status'>,
  settlement_id: string,
  at: Date,
): Promise<PaymentRow> {
  if (payment.status === 'partially_paid')
    return trx
      .updateTable('payments')
      .set({ settlement_id, settled_at: at })
      .where('id', '=', payment.id)
      .where('status', '=', 'partially_paid')
      .where('settlement_id', 'is', null)
      .returningAll()
      .executeTakeFirstOrThrow();
  return transition(trx, payment, 'settled', at, { settlement_id });
}

/** Succeeded refunds of each of these payments so far, minor units (a statement's and its CSV's refund figures). */
export async function refundedByPayment(
  executor: Executor,
  payment_ids: readonly string[],
): Promise<Map<string, number>> {
  if (payment_ids.length === 0) return new Map();
  const rows = await executor
    .selectFrom('payments')
    .select(['id', 'amount_refunded_minor'])
    .where('id', 'in', [...payment_ids])
    .execute();
  return new Map(rows.map((row) => [row.id, Number(row.amount_refunded_minor)]));
}

/** Succeeded refunds so far of the payments a settlement batch holds, minor units. */
export async function refundedInSettlement(executor: Executor, settlement_id: string): Promise<number> {
  const row = await executor
    .selectFrom('payments')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('amount_refunded_minor'), eb.lit(0)).as('total'))
    .where('settlement_id', '=', settlement_id)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}
