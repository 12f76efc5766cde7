import type { Db, Trx } from '../../db/database.ts';
import { eventAbout, recordEvent } from '../events/outbox.ts';
import type { PaymentsDeps } from './deps.ts';
import { legProof, paymentEventFields, presentPayment, type PaymentView, type PresentedLeg } from './present.ts';
import { slipOwner, slipsOf } from '../validators/slips.ts';
import type { SellerLegView } from './schema.ts';
import type { LegRow, PaymentRow, PaymentStatus, ProofRow } from './tables.ts';

export async function loadLegs(executor: Db | Trx, payment_id: string): Promise<LegRow[]> {
  return executor
    .selectFrom('payment_legs')
    .selectAll()
    .where('payment_id', '=', payment_id)
    .orderBy('match_order')
    .execute();
}

/** Statuses in which a payment may hold slips (the others never had an upload). */
const MAY_HOLD_PROOFS: readonly PaymentStatus[] = ['confirming', 'completed', 'partially_paid', 'failed', 'settled'];

/** The legs with their slips, for a view (no query for a payment that cannot hold any). */
export async function legsWithProofs(
  executor: Db | Trx,
  payment: Pick<PaymentRow, 'id' | 'status'>,
  legs: readonly LegRow[],
): Promise<PresentedLeg[]> {
  if (!MAY_HOLD_PROOFS.includes(payment.status)) return [...legs];
  const proofs = await executor
    .selectFrom('payment_proofs')
    .select(['id', 'match_order', 'verdict', 'verdict_reason', 'created_at'])
    .where('payment_id', '=', payment.id)
    .execute();
  return legs.map((leg) => {
    const proof = proofs.find((candidate) => candidate.match_order === leg.match_order);
    return { ...leg, proof: proof ? legProof(proof, payment.status) : null };
  });
}

/** Records a payment event in the outbox within `trx`: the resource in `data` and the contract's flat fields. */
export async function emitPaymentEvent(
  trx: Trx,
  at: Date,
  deps: Pick<PaymentsDeps, 'public_base_url'>,
  payment: PaymentRow,
  legs: readonly LegRow[],
  type: string,
): Promise<PaymentView> {
  const view = presentPayment(payment, await legsWithProofs(trx, payment, legs), deps.public_base_url);
  await recordEvent(trx, at, {
    ...eventAbout('payment', payment),
    type,
    data: view as unknown as Record<string, unknown>,
    flat: paymentEventFields(view),
  });
  return view;
}

/** The slip route of a leg, as its seller fetches it. */
export const sellerLegImageUrl = (public_base_url: string, payment_id: string, match_order: number) =>
  `${public_base_url}/v1/seller/legs/${payment_id}/${match_order}/slip`;

/** A leg as its seller sees it, from its payment, its row and its slip (with the slip's stored bank reference). */
export async function presentSellerLegs(
  executor: Db | Trx,
  public_base_url: string,
  rows: readonly {
    payment: Pick<PaymentRow, 'id' | 'currency' | 'status'>;
    leg: Pick<LegRow, 'match_order' | 'seller_id' | 'allocated_fiat_amount' | 'amount_micro_pay'>;
    proof: Pick<
      ProofRow,
      | 'id'
      | 'verdict'
      | 'verdict_reason'
      | 'created_at'
      | 'awaiting_payee_at'
      | 'decided_by'
      | 'decision_reason'
      | 'sha256'
    >;
  }[],
): Promise<SellerLegView[]> {
  const slips = await slipsOf(
    executor as Db,
    rows.map((row) => slipOwner.paymentLeg(row.payment.id, row.leg.match_order)),
  );
  return rows.map(({ payment, leg, proof }) => {
    const slip = slips.find(
      (candidate) =>
        candidate.owner === slipOwner.paymentLeg(payment.id, leg.match_order) && candidate.sha256 === proof.sha256,
    );
    const shown = legProof(proof, payment.status);
    return {
      payment_id: payment.id,
      match_order: leg.match_order,
      seller_id: leg.seller_id,
      status: shown.status,
      amount_minor: Number(leg.allocated_fiat_amount),
      currency: payment.currency,
      amount_micro_pay: Number(leg.amount_micro_pay),
      reference: slip?.reference ?? null,
      sending_bank: slip?.sending_bank ?? null,
      image_url: sellerLegImageUrl(public_base_url, payment.id, leg.match_order),
      received_at: new Date(proof.created_at).toISOString(),
      awaiting_payee_since: proof.awaiting_payee_at ? new Date(proof.awaiting_payee_at).toISOString() : null,
      reason: shown.status === 'rejected' ? (proof.decision_reason ?? shown.reason) : null,
      decided_by: proof.decided_by,
    };
  });
}

/**
 * Records `leg.awaiting_payee` within `trx`: the leg's slip passed the checks it got, which are not evidence for live
 * money, so its seller is asked to confirm that the money arrived (the payment's merchant and the seller's endpoint).
 */
export async function emitLegAwaitingPayee(
  trx: Trx,
  at: Date,
  deps: Pick<PaymentsDeps, 'public_base_url'>,
  payment: PaymentRow,
  legs: readonly LegRow[],
  match_order: number,
): Promise<void> {
  const leg = legs.find((candidate) => candidate.match_order === match_order);
  const proof = await trx
    .selectFrom('payment_proofs')
    .selectAll()
    .where('payment_id', '=', payment.id)
    .where('match_order', '=', match_order)
    .executeTakeFirst();
  if (!leg || !proof) return;
  const [view] = await presentSellerLegs(trx, deps.public_base_url, [{ payment, leg, proof }]);
  await recordEvent(trx, at, {
    ...eventAbout('payment', payment),
    type: 'leg.awaiting_payee',
    data: view as unknown as Record<string, unknown>,
  });
}
