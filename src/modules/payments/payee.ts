import type { Trx } from '../../db/database.ts';
import { type AppError, notFound } from '../../lib/errors.ts';
import { type AdminActor, recordAdminAction } from '../audit/service.ts';
import type { PaymentsDeps } from './deps.ts';
import { legNotAwaitingPayee } from './errors.ts';
import { legProof } from './present.ts';
import { loadLegs, presentSellerLegs } from './legs.ts';
import { decidePayment } from './lifecycle.ts';
import type { SellerLegView } from './schema.ts';
import { refuseSlipByPayee, slipOwner } from '../validators/slips.ts';
import { lockPayment } from './state.ts';
import { failUnpostableCompletion, isLedgerRefusal } from './verdicts.ts';

/**
 * The payee's word on a leg whose slip waits for it (DESIGN 3b "Evidence of a live payment leg"): the seller who
 * would have received the money says whether it arrived. Confirming verifies the leg (the payment then completes
 * through the one completion path when every leg is verified); rejecting rejects it (the payment fails, or ends
 * partially_paid when another leg was verified). The operator may decide for a seller (audited).
 */

/** Why a payee's rejection rejected a leg (the leg's `reason`; the payee's words are kept beside it). */
export const PAYEE_REJECTED = 'payee_rejected';

export type LegDecision = { decision: 'confirm' } | { decision: 'reject'; reason: string };

export interface LegDecider {
  /** A seller deciding its own leg (another seller's is 404), or an operator deciding for any seller. */
  by: { seller_id: string } | { operator: AdminActor };
}

/** Confirms or rejects one leg waiting for its payee; answers the leg as its seller sees it after the decision. */
export async function decideLeg(
  deps: PaymentsDeps,
  payment_id: string,
  match_order: number,
  decider: LegDecider,
  decision: LegDecision,
): Promise<SellerLegView> {
  try {
    return await decideInTransaction(deps, payment_id, match_order, decider, decision);
  } catch (error) {
    if (decision.decision !== 'confirm' || !isLedgerRefusal(error)) throw error;
    // The payee confirmed, but the seller's PAY no longer covers its leg: the payment fails visibly, as when a
    // provider's verdict meets the same refusal (the operator makes the buyer whole; the seller leaves matching).
    const proof = await deps.db
      .selectFrom('payment_proofs')
      .select('id')
      .where('payment_id', '=', payment_id)
      .where('match_order', '=', match_order)
      .executeTakeFirstOrThrow();
    await failUnpostableCompletion(
      deps,
      proof.id,
      {
        outcome: 'verified',
        validator_kind: 'null_validator',
        response: { payee_confirmed: { by: 'seller_id' in decider.by ? 'seller' : 'operator' } },
      },
      error as AppError,
    );
    return deps.db.transaction().execute(async (trx) => {
      const payment = await trx
        .selectFrom('payments')
        .selectAll()
        .where('id', '=', payment_id)
        .executeTakeFirstOrThrow();
      const leg = (await loadLegs(trx, payment_id)).find((candidate) => candidate.match_order === match_order)!;
      return readSellerLeg(trx, deps.public_base_url, payment, leg, proof.id);
    });
  }
}

async function decideInTransaction(
  deps: PaymentsDeps,
  payment_id: string,
  match_order: number,
  decider: LegDecider,
  decision: LegDecision,
): Promise<SellerLegView> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    // The slip first, then its payment: the verdict worker's lock order.
    const proof = await trx
      .selectFrom('payment_proofs')
      .selectAll()
      .where('payment_id', '=', payment_id)
      .where('match_order', '=', match_order)
      .forUpdate()
      .executeTakeFirst();
    const payment = proof ? await lockPayment(trx, payment_id) : undefined;
    const legs = payment ? await loadLegs(trx, payment_id) : [];
    const leg = legs.find((candidate) => candidate.match_order === match_order);
    const seller_id = 'seller_id' in decider.by ? decider.by.seller_id : undefined;
    // A seller sees only its own live legs: anything else is not found.
    if (!proof || !payment || !leg || (seller_id !== undefined && (leg.seller_id !== seller_id || payment.is_sandbox)))
      throw notFound('Leg');
    if (payment.status !== 'confirming' || proof.verdict !== 'awaiting_payee')
      throw legNotAwaitingPayee(legProof(proof, payment.status).status);
    const decided_by = seller_id === undefined ? ('operator' as const) : ('seller' as const);
    await trx
      .updateTable('payment_proofs')
      .set({
        verdict: decision.decision === 'confirm' ? 'verified' : 'failed',
        verdict_reason: decision.decision === 'confirm' ? null : PAYEE_REJECTED,
        decision_reason: decision.decision === 'confirm' ? null : decision.reason,
        decided_by,
        decided_at: now,
      })
      .where('id', '=', proof.id)
      .execute();
    if (decision.decision === 'reject')
      await refuseSlipByPayee(trx, slipOwner.paymentLeg(payment_id, match_order), now);
    if ('operator' in decider.by)
      await recordAdminAction(trx, {
        at: now,
        actor: decider.by.operator,
        action: `payment.leg.${decision.decision}`,
        target_type: 'payment',
        target_id: payment_id,
        details: {
          match_order,
          seller_id: leg.seller_id,
          ...(decision.decision === 'reject' ? { reason: decision.reason } : {}),
        },
      });
    const now_payment = await decidePayment(deps, trx, payment, legs, now);
    return readSellerLeg(trx, deps.public_base_url, now_payment, leg, proof.id);
  });
}

async function readSellerLeg(
  trx: Trx,
  public_base_url: string,
  payment: Parameters<typeof presentSellerLegs>[2][number]['payment'],
  leg: Parameters<typeof presentSellerLegs>[2][number]['leg'],
  proof_id: string,
): Promise<SellerLegView> {
  const proof = await trx.selectFrom('payment_proofs').selectAll().where('id', '=', proof_id).executeTakeFirstOrThrow();
  const [view] = await presentSellerLegs(trx, public_base_url, [{ payment, leg, proof }]);
  return view!;
}
