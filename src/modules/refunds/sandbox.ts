import type { Trx } from '../../db/database.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { refundEnded } from './errors.ts';
import { moveRefundHold } from './ledger.ts';
import { emitRefundEvents, type RefundView } from './present.ts';
import { endRefund, succeedRefund, type RefundsDeps } from './service.ts';
import { lockOwnedRefund, transition } from './state.ts';

/** Where a simulated refund goes when the buyer never named a destination (a synthetic PromptPay ID). */
const SANDBOX_DESTINATION = { rail: 'promptpay', promptpay_id: '0800000000' } as const;

/**
 * POST /v1/sandbox/refunds/{id}/simulate: plays the rest of a sandbox refund's life to the end asked for, each step
 * with its events and signed webhooks: a refund still waiting for its claim gets a synthetic destination (`pending`),
 * then `succeeded` (the payment's amount_refunded, payment.refunded when whole) or `failed` (`sandbox_simulated_failure`).
 */
export async function simulateRefund(
  deps: RefundsDeps,
  trx: Trx,
  scope: MerchantScope,
  id: string,
  outcome: 'succeeded' | 'failed',
): Promise<RefundView> {
  const now = deps.clock.now();
  let refund = await lockOwnedRefund(trx, scope, id);
  if (refund.status !== 'requires_action' && refund.status !== 'pending') throw refundEnded(refund.status);
  if (refund.status === 'requires_action') {
    refund = await transition(trx, refund, 'pending', now, { destination: JSON.stringify(SANDBOX_DESTINATION) });
    await emitRefundEvents(trx, now, deps.public_base_url, refund, 'moved');
  }
  if (outcome === 'succeeded') {
    // A simulated payout of held PAY leaves as a real one would: burned, as a completed sell order's reserve is.
    await moveRefundHold(deps.ledger, trx, refund, 'payout');
    return succeedRefund(deps, trx, refund, now);
  }
  return endRefund(deps, trx, refund, now, 'failed', 'sandbox_simulated_failure');
}
