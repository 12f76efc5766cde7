import type { Trx } from '../../db/database.ts';
import { OWNERSHIP, owned } from '../../http/ownership.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { assert } from '../../lib/assert.ts';
import type { PaymentsDeps } from './deps.ts';
import { emitPaymentEvent, loadLegs } from './legs.ts';
import { isRefunded } from './present.ts';
import { lockPayment } from './state.ts';
import type { PaymentRow, PaymentStatus } from './tables.ts';

/**
 * What the refunds module asks of a payment (DESIGN 3c): the payment locked for a refund's check, what it received,
 * and the count of its succeeded refunds, which only this module writes.
 */

/** Payments a refund may be made of: they received money (all of it, or the verified legs' part). */
export const REFUNDABLE: readonly PaymentStatus[] = ['completed', 'settled', 'partially_paid'];

/**
 * The PAY the payment credited its merchant before the fee, micro-PAY: every leg once completed, the verified legs
 * alone when partly paid (the others never moved PAY).
 */
export async function creditedMicroPay(trx: Trx, payment: Pick<PaymentRow, 'id' | 'status'>): Promise<number> {
  let query = trx
    .selectFrom('payment_legs')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('payment_legs.amount_micro_pay'), eb.val('0')).as('total'))
    .where('payment_legs.payment_id', '=', payment.id);
  if (payment.status === 'partially_paid')
    query = query.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('payment_proofs')
          .select('payment_proofs.id')
          .whereRef('payment_proofs.payment_id', '=', 'payment_legs.payment_id')
          .whereRef('payment_proofs.match_order', '=', 'payment_legs.match_order')
          .where('payment_proofs.verdict', '=', 'verified'),
      ),
    );
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.total);
}

/**
 * The caller's own payment, locked for the rest of the transaction (another merchant's or mode's is 404): refunds of
 * one payment are created one at a time under this lock, so their sum is checked against a total nobody else moves.
 */
export async function lockPaymentForRefund(trx: Trx, scope: MerchantScope, id: string): Promise<PaymentRow> {
  return owned(await lockPayment(trx, id), scope, OWNERSHIP.payment);
}

/** The payment of a refund, locked (it exists: a refund row references it). */
export async function lockRefundedPayment(trx: Trx, id: string): Promise<PaymentRow> {
  const payment = await lockPayment(trx, id);
  assert(payment !== undefined, `payment ${id} exists under its refund (rows are never deleted)`);
  return payment;
}

/**
 * A refund of the payment succeeded: its amount joins `amount_refunded`, and the refund that makes the whole amount
 * back emits `payment.refunded` with the payment.
 */
export async function recordRefundSucceeded(
  deps: Pick<PaymentsDeps, 'public_base_url'>,
  trx: Trx,
  payment_id: string,
  amount_minor: number,
  at: Date,
): Promise<PaymentRow> {
  const before = await lockRefundedPayment(trx, payment_id);
  const after = await trx
    .updateTable('payments')
    .set((eb) => ({ amount_refunded_minor: eb('amount_refunded_minor', '+', amount_minor) }))
    .where('id', '=', payment_id)
    .returningAll()
    .executeTakeFirstOrThrow();
  if (!isRefunded(before) && isRefunded(after))
    await emitPaymentEvent(trx, at, deps, after, await loadLegs(trx, payment_id), 'payment.refunded');
  return after;
}
