import type { Db, Trx } from '../../db/database.ts';
import { OWNERSHIP, owned } from '../../http/ownership.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { consumeLegs, lockSellersInOrder, releaseLegs } from '../liquidity/service.ts';
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

/** Why a payment failed (or ended partly paid) when a leg had no slip at `expires_at`. */
export const PROOF_MISSING = 'proof_missing';

/** A leg's standing as its payment's outcome sees it. */
type LegStanding = 'verified' | 'rejected' | 'pending' | 'missing';

/**
 * Decides a `confirming` payment from its legs' slips, under its lock (DESIGN 3a, 3b): every leg verified ->
 * `completed`; a leg rejected -> the payment ends at once, `partially_paid` when another leg was verified, else
 * `failed` with the rejected leg's reason; at `expires_at` with a leg that never got a slip and none still under
 * check or waiting for its payee -> `partially_paid` when a leg was verified, else `failed` (`proof_missing`).
 * Anything else waits: a slip under check or waiting for its payee keeps the payment open past `expires_at`, because
 * the buyer may have paid it. Returns the row as it is now.
 */
export async function decidePayment(
  deps: PaymentsDeps,
  trx: Trx,
  payment: PaymentRow,
  legs: readonly LegRow[],
  now: Date,
): Promise<PaymentRow> {
  if (payment.status !== 'confirming') return payment;
  const proofs = await trx
    .selectFrom('payment_proofs')
    .select(['match_order', 'verdict', 'verdict_reason'])
    .where('payment_id', '=', payment.id)
    .execute();
  const standing = (leg: LegRow): LegStanding => {
    const proof = proofs.find((candidate) => candidate.match_order === leg.match_order);
    if (!proof) return 'missing';
    if (proof.verdict === 'verified') return 'verified';
    if (proof.verdict === 'failed') return 'rejected';
    return 'pending';
  };
  const verified = legs.filter((leg) => standing(leg) === 'verified');
  const rejected = legs.find((leg) => standing(leg) === 'rejected');
  if (rejected) {
    const reason = proofs.find((proof) => proof.match_order === rejected.match_order)?.verdict_reason;
    const failure_reason = `receipt_${reason ?? 'rejected'}`;
    if (verified.length > 0) return partiallyPay(deps, trx, payment, legs, verified, now, failure_reason);
    return (await endPayment(deps, trx, payment, legs, now, 'failed', failure_reason)).ended;
  }
  if (verified.length === legs.length) return completePayment(deps, trx, payment, legs, now);
  const past_deadline = payment.expires_at.getTime() <= now.getTime();
  if (!past_deadline || legs.some((leg) => standing(leg) === 'pending')) return payment;
  if (verified.length > 0) return partiallyPay(deps, trx, payment, legs, verified, now, PROOF_MISSING);
  return (await endPayment(deps, trx, payment, legs, now, 'failed', PROOF_MISSING)).ended;
}

/** Every leg verified: liquidity consumed, PAY moved by the completion port, `payment.completed`. */
async function completePayment(
  deps: PaymentsDeps,
  trx: Trx,
  payment: PaymentRow,
  legs: readonly LegRow[],
  now: Date,
): Promise<PaymentRow> {
  const completed = await transition(trx, payment, 'completed', now, { amount_received_minor: payment.amount_minor });
  await consumeLegs(trx, legs);
  const charged = await deps.completion.onCompleted(trx, completed, legs);
  await emitPaymentEvent(trx, now, deps, charged, legs, 'payment.completed');
  return charged;
}

/**
 * Some legs verified, the others rejected or never proven (DESIGN 3b "Partly paid"): the verified legs complete
 * (their sellers' PAY to the merchant less the fee of those legs alone, through the one completion port), the other
 * legs' liquidity goes back, `amount_received` is the verified legs' fiat, `failure_reason` says why the rest did not
 * arrive, and `payment.partially_paid` is emitted. A buyer's paid leg is never lost.
 */
async function partiallyPay(
  deps: PaymentsDeps,
  trx: Trx,
  payment: PaymentRow,
  legs: readonly LegRow[],
  verified: readonly LegRow[],
  now: Date,
  failure_reason: string,
): Promise<PaymentRow> {
  const received = verified.reduce((sum, leg) => sum + Number(leg.allocated_fiat_amount), 0);
  const partly = await transition(trx, payment, 'partially_paid', now, {
    amount_received_minor: received,
    completed_at: now,
    failure_reason,
  });
  await consumeLegs(trx, verified);
  await releaseLegs(
    trx,
    legs.filter((leg) => !verified.includes(leg)),
  );
  const charged = await deps.completion.onCompleted(trx, partly, verified);
  await emitPaymentEvent(trx, now, deps, charged, legs, 'payment.partially_paid');
  return charged;
}

/** Applies whatever `expires_at` demands of the payment (expiry, then the decision on missing slips); returns the row as it is now. */
export async function passDeadline(deps: PaymentsDeps, trx: Trx, payment: PaymentRow, now: Date): Promise<PaymentRow> {
  const current = await expireIfDue(deps, trx, payment, now);
  if (current.status !== 'confirming' || current.expires_at.getTime() > now.getTime()) return current;
  return decidePayment(deps, trx, current, await loadLegs(trx, current.id), now);
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
 * Worker sweep: expires due payments and decides `confirming` ones still missing a leg's slip at `expires_at` (none
 * under check or waiting for its payee), in
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
            // A slip under check or waiting for its payee keeps the payment open (the buyer may have paid it).
            eb.not(
              eb.exists(
                eb
                  .selectFrom('payment_proofs as pending')
                  .select('pending.id')
                  .whereRef('pending.payment_id', '=', 'payments.id')
                  .where((inner) =>
                    inner.or([
                      inner('pending.verdict', 'is', null),
                      inner('pending.verdict', 'in', ['unverified', 'timeout', 'awaiting_payee']),
                    ]),
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
