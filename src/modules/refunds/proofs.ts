import { randomUUID } from 'node:crypto';
import type { MerchantScope } from '../../http/principal.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import { slipReceiver } from '../reference/payout-destinations.ts';
import { checkedByProvider, judgeSlip } from '../validators/slips.ts';
import { refundNotAwaitingProof } from './errors.ts';
import { emitRefundEvents, viewOfRefund, type RefundView } from './present.ts';
import { succeedRefund, type RefundsDeps } from './service.ts';
import { findOwnedRefund, lockOwnedRefund } from './state.ts';
import type { RefundRow } from './tables.ts';

/**
 * The merchant's slip of a merchant_transfer refund (DESIGN 3c "Who pays a refund"), checked like any slip: the
 * refund's amount, the buyer's destination as payee, a bank reference never accepted before (the slips ledger, owner
 * `refund:<id>`). The merchant gains if its slip is false, so its word alone is not evidence: a provider's verdict
 * that checked amount and payee makes the refund `succeeded`; without one the buyer confirms on the claim page (and
 * a slip the buyer does not dispute within REFUND_CONFIRM_DAYS stands). A rejected slip leaves the refund `pending`
 * with `failure_reason`, for another slip.
 */

export const refundSlipOwner = (refund_id: string) => `refund:${refund_id}`;

function ensureTakesProof(refund: RefundRow): void {
  if (refund.status !== 'pending' || refund.destination === null) throw refundNotAwaitingProof(refund.status);
  if (refund.funding !== 'merchant_transfer')
    throw refundNotAwaitingProof(
      refund.status,
      'A pay_balance refund is paid out through the payout network; its payer confirms the transfer',
    );
  if (refund.awaiting_buyer_since !== null)
    throw refundNotAwaitingProof(refund.status, 'This refund has a slip waiting for the buyer to confirm receipt');
}

export interface RefundSlip {
  bytes: Uint8Array;
  content_type: string;
}

/**
 * POST /v1/refunds/{id}/proof: the slip is judged before the transaction (a provider call must not hold one), then
 * applied under the refund's lock, where a refund that moved meanwhile is refused.
 */
export async function uploadRefundProof(
  deps: RefundsDeps,
  scope: MerchantScope,
  id: string,
  slip: RefundSlip,
): Promise<RefundView> {
  const refund = await findOwnedRefund(deps.db, scope, id);
  ensureTakesProof(refund);
  const destination = refund.destination;
  if (!destination) throw refundNotAwaitingProof(refund.status);
  const answer = await judgeSlip(deps, {
    owner: refundSlipOwner(refund.id),
    is_sandbox: refund.is_sandbox,
    image: slip.bytes,
    content_type: slip.content_type,
    expect: {
      expected_amount_minor: Number(refund.amount_minor),
      currency: refund.currency,
      receiver: slipReceiver(destination),
    },
  });
  const verdict = answer.verdict;
  return deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const locked = await lockOwnedRefund(trx, scope, id);
    ensureTakesProof(locked);
    const by_provider = checkedByProvider(verdict);
    await trx
      .insertInto('refund_proofs')
      .values({
        id: randomUUID(),
        refund_id: locked.id,
        sha256: sha256Hex(slip.bytes),
        content_type: slip.content_type,
        size_bytes: slip.bytes.byteLength,
        data: slip.bytes,
        outcome: verdict.outcome,
        reason: verdict.reason ?? null,
        reference: answer.reference,
        validator_kind: verdict.validator_kind,
        validator_response: JSON.stringify(verdict.response),
        checked_by_provider: by_provider,
        created_at: now,
      })
      .execute();
    if (by_provider) return succeedRefund(deps, trx, locked, now);
    if (verdict.outcome === 'failed') {
      const rejected = await trx
        .updateTable('refunds')
        .set({ failure_reason: verdict.reason ?? 'slip_rejected' })
        .where('id', '=', locked.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return viewOfRefund(trx, rejected, deps.public_base_url);
    }
    // Nobody could check it (no provider, or the provider is out): the buyer's word decides, on the claim page.
    const waiting = await trx
      .updateTable('refunds')
      .set({ failure_reason: null, awaiting_buyer_since: now })
      .where('id', '=', locked.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return emitRefundEvents(trx, now, deps.public_base_url, waiting, 'moved');
  });
}
