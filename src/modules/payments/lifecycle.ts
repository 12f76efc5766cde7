import type { Db, Trx } from '../../db/database.ts';
import { OWNERSHIP, owned } from '../../http/ownership.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { lockSellersInOrder, releaseLegs } from '../liquidity/service.ts';
import type { PaymentsDeps } from './deps.ts';
import { paymentNotCancellable } from './errors.ts';
import { emitPaymentEvent, loadLegs } from './legs.ts';
import type { PaymentView } from './present.ts';
import { CANCELLABLE, isDue, lockPayment, OPEN_FOR_PROOF, relockPayment, transition } from './state.ts';
import type { LegRow, PaymentRow } from './tables.ts';

/**
 * A payment's moves outside the verdict worker: expiry (on the way through a read or write, and the sweep), the
 * failure of a `confirming` payment still missing a slip at `expires_at`, the merchant's cancel and the buyer
 * opening the checkout.
 */

/** The caller's own payment by the one ownership rule (anything else is 404). */
export async function findOwned(executor: Db | Trx, scope: MerchantScope, id: string): Promise<PaymentRow> {
  return owned(
    await executor.selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirst(),
    scope,
    OWNERSHIP.payment,
  );
}

/**
 * Ends a payment short of completion (`expired`, `failed` with its reason, or `cancelled`) inside `trx`: the move,
 * its held liquidity back to the sellers, and its `payment.<status>` event.
 */
export async function endPayment(
  deps: PaymentsDeps,
  trx: Trx,
  payment: PaymentRow,
  legs: readonly LegRow[],
  now: Date,
  status: 'expired' | 'failed' | 'cancelled',
  failure_reason?: string,
): Promise<{ ended: PaymentRow; view: PaymentView }> {
  const ended = await transition(trx, payment, status, now, failure_reason === undefined ? {} : { failure_reason });
  await releaseLegs(trx, legs);
  return { ended, view: await emitPaymentEvent(trx, now, deps, ended, legs, `payment.${status}`) };
}

/** Expires a due payment inside `trx` (releases its liquidity, emits `payment.expired`); returns the row as it is now. */
export async function expireIfDue(deps: PaymentsDeps, trx: Trx, payment: PaymentRow, now: Date): Promise<PaymentRow> {
  if (!isDue(payment, now)) return payment;
  return (await endPayment(deps, trx, payment, await loadLegs(trx, payment.id), now, 'expired')).ended;
}

/**
 * A `confirming` payment still missing a leg's slip at `expires_at` fails (`proof_missing`, liquidity released,
 * `payment.failed`); returns the row as it is now.
 */
async function failIfProofMissing(deps: PaymentsDeps, trx: Trx, payment: PaymentRow, now: Date): Promise<PaymentRow> {
  if (payment.status !== 'confirming' || payment.expires_at.getTime() > now.getTime()) return payment;
  const legs = await loadLegs(trx, payment.id);
  const proven = await trx
    .selectFrom('payment_proofs')
    .select('match_order')
    .where('payment_id', '=', payment.id)
    .execute();
  if (legs.every((leg) => proven.some((proof) => proof.match_order === leg.match_order))) return payment;
  return (await endPayment(deps, trx, payment, legs, now, 'failed', PROOF_MISSING)).ended;
}

/** Why a payment failed when a leg had no slip at `expires_at`. */
export const PROOF_MISSING = 'proof_missing';

/** Applies whatever `expires_at` demands of the payment (expiry, then a missing slip's failure); returns the row as it is now. */
export async function passDeadline(deps: PaymentsDeps, trx: Trx, payment: PaymentRow, now: Date): Promise<PaymentRow> {
  return failIfProofMissing(deps, trx, await expireIfDue(deps, trx, payment, now), now);
}

/** Cancels a payment that is still `created` or `matching`; any other status is 409 PAYMENT_BAD_STATE. */
export async function cancelPayment(deps: PaymentsDeps, scope: MerchantScope, id: string): Promise<PaymentView> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    await findOwned(trx, scope, id);
    const payment = await expireIfDue(deps, trx, await relockPayment(trx, id), now);
    if (!CANCELLABLE.includes(payment.status)) {
      throw paymentNotCancellable(payment.status);
    }
    return (await endPayment(deps, trx, payment, await loadLegs(trx, id), now, 'cancelled')).view;
  });
}

/** The buyer opened the hosted checkout: matched -> payment_pending (once). */
export async function markCheckoutOpened(deps: PaymentsDeps, id: string): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const locked = await lockPayment(trx, id);
    if (!locked) return;
    const payment = await expireIfDue(deps, trx, locked, now);
    if (payment.status !== 'matched') return;
    const pending = await transition(trx, payment, 'payment_pending', now, { checkout_opened_at: now });
    await emitPaymentEvent(trx, now, deps, pending, await loadLegs(trx, id), 'payment.payment_pending');
  });
}

/**
 * Worker sweep: expires due payments and fails `confirming` ones still missing a leg's slip at `expires_at`, in
 * batches, each payment with its event, skipping rows another worker holds.
 */
export async function expireDuePayments(deps: PaymentsDeps, batch = 100): Promise<number> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const due = await trx
      .selectFrom('payments')
      .selectAll()
      .where((eb) =>
        eb.or([
          eb('status', 'in', OPEN_FOR_PROOF),
          eb.and([
            eb('status', '=', 'confirming'),
            eb.exists(
              eb
                .selectFrom('payment_legs as leg')
                .select('leg.match_order')
                .whereRef('leg.payment_id', '=', 'payments.id')
                .where(({ not, exists, selectFrom }) =>
                  not(
                    exists(
                      selectFrom('payment_proofs as proof')
                        .select('proof.id')
                        .whereRef('proof.payment_id', '=', 'leg.payment_id')
                        .whereRef('proof.match_order', '=', 'leg.match_order'),
                    ),
                  ),
                ),
            ),
          ]),
        ]),
      )
      .where('expires_at', '<=', now)
      .orderBy('expires_at')
      .limit(batch)
      .forUpdate()
      .skipLocked()
      .execute();
    // Every seller the batch will give liquidity back to, locked first in the reservation's order (one lock order).
    if (due.length > 1) {
      const sellers = await trx
        .selectFrom('payment_legs')
        .select('seller_id')
        .where(
          'payment_id',
          'in',
          due.map((payment) => payment.id),
        )
        .execute();
      await lockSellersInOrder(
        trx,
        sellers.map((leg) => leg.seller_id),
      );
    }
    for (const payment of due) await passDeadline(deps, trx, payment, now);
    return due.length;
  });
}
