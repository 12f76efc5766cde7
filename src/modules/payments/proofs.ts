import { randomUUID } from 'node:crypto';
import type { MerchantScope } from '../../http/principal.ts';
import { present } from '../../lib/assert.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import { notFound } from '../../lib/errors.ts';
import { checkProof } from '../validators/receipt.ts';
import type { PaymentsDeps } from './deps.ts';
import {
  expiredBeforeProof,
  proofAllLegsTaken,
  proofDuplicate,
  proofLegTaken,
  proofLegUnknown,
  proofLegWithParts,
  proofNotAccepted,
  proofTooManyParts,
} from './errors.ts';
import { emitPaymentEvent, loadLegs } from './legs.ts';
import { findOwned, passDeadline } from './lifecycle.ts';
import { lockPayment, OPEN_FOR_PROOF, transition } from './state.ts';

export interface ProofReceipt {
  id: string;
  leg: number;
  sha256: string;
  content_type: string;
  size_bytes: number;
  received_at: string;
}

export interface ProofUploadResult {
  payment_id: string;
  status: string;
  /** The first slip of this upload (the only one for a one-leg payment). */
  proof: ProofReceipt;
  /** Every slip of this upload, one per leg. */
  proofs: ProofReceipt[];
}

/** The upload: `proof` parts in order, and the `leg` field when one part names its leg. */
export interface ProofUpload {
  files: readonly Uint8Array[];
  leg?: number | undefined;
}

/**
 * Takes the buyer's slips (DESIGN 3a "Multi-leg proofs"): one `proof` part per leg in `match_order`, starting at the
 * first leg without a slip, or one part with a `leg` field. The payment must be `matched` or `payment_pending`, or
 * `confirming` with a leg still unproven; the first accepted upload moves it to `confirming` (`payment.confirming`),
 * and the worker then judges each leg's slip. `scope` null is the hosted checkout (scoped to the payment id).
 * Types are read from the bytes; a file already used on another payment or another leg is 409 PROOF_DUPLICATE;
 * the same file sent again for its own leg is answered as before (a retried upload).
 */
export async function uploadProof(
  deps: PaymentsDeps,
  scope: MerchantScope | null,
  id: string,
  upload: ProofUpload,
): Promise<ProofUploadResult> {
  if (upload.files.length === 0) checkProof(undefined);
  if (upload.leg !== undefined && upload.files.length !== 1) throw proofLegWithParts();
  const files = upload.files.map((file) => {
    const checked = checkProof(file);
    return { ...checked, sha256: sha256Hex(checked.bytes) };
  });
  if (new Set(files.map((file) => file.sha256)).size !== files.length) throw proofDuplicate();
  const now = deps.clock.now();
  const result = await deps.db.transaction().execute(async (trx) => {
    if (scope) await findOwned(trx, scope, id);
    const locked = await lockPayment(trx, id);
    if (!locked) throw notFound('Payment');
    const payment = await passDeadline(deps, trx, locked, now);
    if (payment.status !== locked.status && (payment.status === 'expired' || payment.status === 'failed'))
      return { expired: true as const };
    if (!OPEN_FOR_PROOF.includes(payment.status) && payment.status !== 'confirming')
      throw proofNotAccepted(payment.status);
    // Past `expires_at` a payment stays open only for slips already sent (under check or waiting for their payee).
    if (payment.expires_at.getTime() <= now.getTime()) throw expiredBeforeProof();
    const legs = await loadLegs(trx, id);
    const existing = await trx
      .selectFrom('payment_proofs')
      .select(['id', 'match_order', 'sha256', 'content_type', 'size_bytes', 'created_at'])
      .where('payment_id', '=', id)
      .execute();
    const receipt = (row: (typeof existing)[number]): ProofReceipt => ({
      id: row.id,
      leg: row.match_order,
      sha256: row.sha256,
      content_type: row.content_type,
      size_bytes: row.size_bytes,
      received_at: row.created_at.toISOString(),
    });
    const open = legs
      .filter((leg) => !existing.some((proof) => proof.match_order === leg.match_order))
      .map((leg) => leg.match_order);
    const receipts: ProofReceipt[] = [];
    const fresh: { file: (typeof files)[number]; leg: number }[] = [];
    for (const file of files) {
      const again = existing.find((proof) => proof.sha256 === file.sha256);
      if (again && (upload.leg === undefined || upload.leg === again.match_order)) {
        receipts.push(receipt(again));
        continue;
      }
      if (again) throw proofDuplicate();
      let leg: number;
      if (upload.leg !== undefined) {
        if (!legs.some((candidate) => candidate.match_order === upload.leg))
          throw proofLegUnknown(upload.leg, legs.length);
        if (!open.includes(upload.leg)) throw proofLegTaken(upload.leg);
        leg = upload.leg;
      } else {
        const next = open[fresh.length];
        if (next === undefined)
          throw open.length === 0 ? proofAllLegsTaken() : proofTooManyParts(files.length, open.length);
        leg = next;
      }
      fresh.push({ file, leg });
    }
    if (fresh.length > 0) {
      const reused = await trx
        .selectFrom('payment_proofs')
        .select('payment_id')
        .where(
          'sha256',
          'in',
          fresh.map(({ file }) => file.sha256),
        )
        .where('is_sandbox', '=', payment.is_sandbox)
        .where('payment_id', '!=', id)
        .executeTakeFirst();
      if (reused) throw proofDuplicate();
      const rows = fresh.map(({ file, leg }) => ({
        id: randomUUID(),
        payment_id: id,
        match_order: leg,
        is_sandbox: payment.is_sandbox,
        sha256: file.sha256,
        content_type: file.content_type,
        size_bytes: file.bytes.byteLength,
        data: file.bytes,
        attempts: 0,
        next_attempt_at: now,
        created_at: now,
        verdict: null,
        verdict_reason: null,
        validator_kind: null,
        validator_response: null,
        claimed_until: null,
      }));
      await trx.insertInto('payment_proofs').values(rows).execute();
      for (const row of rows) receipts.push(receipt(row));
    }
    receipts.sort((a, b) => a.leg - b.leg);
    let current = payment;
    if (payment.status !== 'confirming') {
      current = await transition(trx, payment, 'confirming', now);
      await emitPaymentEvent(trx, now, deps, current, legs, 'payment.confirming');
    }
    const first = present(receipts[0], 'an upload has at least one proof');
    return {
      expired: false as const,
      fresh: fresh.length,
      value: { payment_id: id, status: current.status, proof: first, proofs: receipts },
    };
  });
  // The expiry committed; only then is the late upload refused.
  if (result.expired) throw expiredBeforeProof();
  if (result.fresh > 0) deps.onProofReceived?.();
  return result.value;
}

/** How many `proof` parts an upload may carry: one per leg of the payment (one for an unknown id, which is then 404). */
export async function proofPartsAllowed(deps: Pick<PaymentsDeps, 'db'>, id: string): Promise<number> {
  const row = await deps.db
    .selectFrom('payment_legs')
    .select((eb) => eb.fn.countAll<number>().as('legs'))
    .where('payment_id', '=', id)
    .executeTakeFirst();
  return Math.max(1, Number(row?.legs ?? 0));
}
