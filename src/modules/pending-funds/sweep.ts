import type { PendingFundsDeps } from './deps.ts';
import { INTAKE_UNVERIFIED_REASON } from './intake.ts';
import { AWAITING_RECEIVER, dueMove, emitPendingFundsEvent, transition, WINDOW_EXPIRED_REASON } from './state.ts';

/** Applies the due sweep move to one row, under its lock. */
export async function sweepOne(deps: Pick<PendingFundsDeps, 'db' | 'clock'>, id: string): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const row = await trx
      .selectFrom('pending_funds')
      .selectAll()
      .where('id', '=', id)
      .forUpdate()
      .skipLocked()
      .executeTakeFirst();
    if (!row) return false;
    const move = dueMove(row, now);
    if (!move) return false;
    // A row that never passed intake validation says so; its intake audit rows hold every attempt.
    const reason =
      move === 'failed' ? WINDOW_EXPIRED_REASON : row.status === 'pending_validation' ? INTAKE_UNVERIFIED_REASON : null;
    const next = await transition(
      trx,
      row,
      move,
      now,
      reason
        ? { failure_reason: reason, ...(row.status === 'pending_validation' ? { intake_next_attempt_at: null } : {}) }
        : {},
    );
    await emitPendingFundsEvent(trx, now, next, move === 'failed' ? 'pending_funds.failed' : 'pending_funds.expired');
    return true;
  });
}

/**
 * Worker pass: rows with no receiver action past their TTL become `expired`; rows whose receiver-confirm window
 * (from the first receiver attempt) has elapsed become `failed` (`receiver_confirm_window_expired`). Rows are
 * claimed with SKIP LOCKED, so several workers (and a confirm in flight) never collide.
 */
export async function sweepPendingFunds(deps: Pick<PendingFundsDeps, 'db' | 'clock'>, batch = 100): Promise<number> {
  const now = deps.clock.now();
  const due = await deps.db
    .selectFrom('pending_funds')
    .select('id')
    .where((eb) =>
      eb.or([
        eb.and([
          eb('status', 'in', ['pending_validation', AWAITING_RECEIVER]),
          eb('first_receiver_attempt_at', 'is', null),
          eb('expires_at', '<=', now),
        ]),
        eb.and([
          eb('status', '=', AWAITING_RECEIVER),
          eb('first_receiver_attempt_at', 'is not', null),
          eb('receiver_window_expires_at', '<=', now),
        ]),
      ]),
    )
    .limit(batch)
    .execute();
  let moved = 0;
  for (const { id } of due) if (await sweepOne(deps, id)) moved += 1;
  return moved;
}
