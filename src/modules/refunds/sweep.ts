import { followEndedPayouts } from './payout.ts';
import type { RefundsDeps } from './service.ts';
import { endRefund, succeedRefund } from './service.ts';
import { lockRefund } from './state.ts';

const DAY_MS = 24 * 3600_000;
const BATCH = 100;

/**
 * The refunds' clock, each refund in its own transaction: a claim link past `claim_expires_at` cancels its refund
 * (`claim_expired`, a PAY hold back to available); a slip nobody could check that the buyer has not disputed for
 * REFUND_CONFIRM_DAYS stands (`succeeded`); a pay_balance refund whose sell order ended on a path that does not tell
 * refunds (a dispute's resolution) follows it. Returns how many refunds moved.
 */
export async function sweepRefunds(deps: RefundsDeps): Promise<number> {
  const now = deps.clock.now();
  const unclaimed = await deps.db
    .selectFrom('refunds')
    .select('id')
    .where('status', '=', 'requires_action')
    .where('claim_expires_at', '<=', now)
    .orderBy('claim_expires_at')
    .limit(BATCH)
    .execute();
  const silent = await deps.db
    .selectFrom('refunds')
    .select('id')
    .where('status', '=', 'pending')
    .where('awaiting_buyer_since', '<=', new Date(now.getTime() - deps.confirm_days * DAY_MS))
    .orderBy('awaiting_buyer_since')
    .limit(BATCH)
    .execute();
  let moved = 0;
  for (const { id } of unclaimed) {
    moved += await deps.db.transaction().execute(async (trx) => {
      const refund = await lockRefund(trx, id);
      if (refund?.status !== 'requires_action' || refund.claim_expires_at > now) return 0;
      await endRefund(deps, trx, refund, now, 'canceled', 'claim_expired');
      return 1;
    });
  }
  const cutoff_ms = now.getTime() - deps.confirm_days * DAY_MS;
  for (const { id } of silent) {
    moved += await deps.db.transaction().execute(async (trx) => {
      const refund = await lockRefund(trx, id);
      if (refund?.status !== 'pending' || (refund.awaiting_buyer_since?.getTime() ?? Infinity) > cutoff_ms) return 0;
      await succeedRefund(deps, trx, refund, now);
      return 1;
    });
  }
  return moved + (await followEndedPayouts(deps, BATCH));
}
