import type { Db, Trx } from '../../db/database.ts';
import { eventAbout, recordEvent } from '../events/outbox.ts';
import type { PaymentsDeps } from './deps.ts';
import { legProof, paymentEventFields, presentPayment, type PaymentView, type PresentedLeg } from './present.ts';
import type { LegRow, PaymentRow, PaymentStatus } from './tables.ts';

export async function loadLegs(executor: Db | Trx, payment_id: string): Promise<LegRow[]> {
  return executor
    .selectFrom('payment_legs')
    .selectAll()
    .where('payment_id', '=', payment_id)
    .orderBy('match_order')
    .execute();
}

/** Statuses in which a payment may hold slips (the others never had an upload). */
const MAY_HOLD_PROOFS: readonly PaymentStatus[] = ['confirming', 'completed', 'failed', 'settled'];

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
