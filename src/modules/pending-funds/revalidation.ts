import { Counter, type Registry } from 'prom-client';
import { workLeased } from '../../workers/lease.ts';
import type { PendingFundsDeps } from './deps.ts';
import { askValidator, applyIntakeVerdict, INTAKE_MAX_ATTEMPTS, nextIntakeAttemptAt } from './intake.ts';

/** A claim is a lease (no transaction spans the validator call); it outlives any validator timeout. */
const CLAIM_MS = 120_000;
/** A pass that threw for a row tries it again after this long, not at once (no hot loop) and not never. */
const ERROR_RETRY_MS = 300_000;

export type RevalidationOutcome = 'verified' | 'failed' | 'unverified' | 'timeout' | 'exhausted' | 'error';

export function createRevalidationMetrics(registry: Registry): Counter<'outcome'> {
  return new Counter({
    name: 'mpay_pending_funds_revalidations_total',
    help: 'Background intake revalidations of pending funds by outcome (exhausted: the last attempt was not conclusive, the row waits for its TTL; error: the pass threw)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
}

/**
 * Worker pass (`pending-funds-revalidation`): rows still `pending_validation` whose intake validation was
 * `unverified` or `timeout` and whose next attempt is due are claimed (SKIP LOCKED plus a lease, so several workers
 * share them), the validator is asked again with the receipt kept at intake, outside any transaction, and the verdict
 * is applied in one transaction per row with its intake-stage audit row (intake.ts applyIntakeVerdict). The waits
 * double (INTAKE_RETRY_BASE_MS); after INTAKE_MAX_ATTEMPTS calls the row is left to expire at its TTL with reason
 * `intake_validation_unverified`, a warning in the log and the `exhausted` metric. A row that throws is released
 * with a delay and never holds the others.
 */
export async function revalidatePendingFunds(deps: PendingFundsDeps, batch = 10): Promise<number> {
  const claimed_at = deps.clock.now();
  return workLeased(deps.db, {
    pick: (trx) =>
      trx
        .selectFrom('pending_funds')
        .select(['id', 'intake_attempts'])
        .where('status', '=', 'pending_validation')
        .where('intake_next_attempt_at', '<=', claimed_at)
        .where('expires_at', '>', claimed_at)
        .where((eb) => eb.or([eb('intake_claimed_until', 'is', null), eb('intake_claimed_until', '<', claimed_at)]))
        .orderBy('intake_next_attempt_at')
        .limit(batch)
        .forUpdate()
        .skipLocked()
        .execute(),
    lease: (trx, ids) =>
      trx
        .updateTable('pending_funds')
        .set({ intake_claimed_until: new Date(claimed_at.getTime() + CLAIM_MS) })
        .where('id', 'in', ids)
        .execute(),
    work: (claim) => revalidateOne(deps, claim.id),
    onError: async (claim, error) => {
      deps.revalidations?.inc({ outcome: 'error' });
      deps.logger?.error(
        { err: error, job: 'pending-funds-revalidation', pending_funds_id: claim.id },
        'pending-funds revalidation could not be applied; retried later',
      );
      const now = deps.clock.now();
      await deps.db
        .updateTable('pending_funds')
        .set({ intake_claimed_until: null, intake_next_attempt_at: new Date(now.getTime() + ERROR_RETRY_MS) })
        .where('id', '=', claim.id)
        .where('status', '=', 'pending_validation')
        .execute();
    },
  });
}

async function revalidateOne(deps: PendingFundsDeps, id: string): Promise<void> {
  const row = await deps.db.selectFrom('pending_funds').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const receipt = await deps.db
    .selectFrom('pending_funds_receipts')
    .selectAll()
    .where('pending_funds_id', '=', id)
    .executeTakeFirst();
  const max_attempts = deps.intake_max_attempts ?? INTAKE_MAX_ATTEMPTS;
  if (!receipt) {
    // A row from before migration 0150 has no bytes to show the validator: it waits for its TTL, said once.
    await deps.db
      .updateTable('pending_funds')
      .set({ intake_next_attempt_at: null, intake_claimed_until: null })
      .where('id', '=', id)
      .execute();
    deps.logger?.warn(
      { job: 'pending-funds-revalidation', pending_funds_id: id },
      'pending funds have no stored receipt to revalidate; left to expire at the TTL',
    );
    return;
  }
  const verdict = await askValidator(deps, receipt.data, receipt.content_type, row);
  const at = deps.clock.now();
  const attempts = row.intake_attempts + 1;
  const { before, after } = await deps.db.transaction().execute((trx) =>
    applyIntakeVerdict(trx, id, at, {
      verdict,
      receipt_sha256: receipt.sha256,
      content_type: receipt.content_type,
      next_attempt_at: nextIntakeAttemptAt(attempts, at, max_attempts, deps.intake_retry_base_ms),
    }),
  );
  if (before.status !== 'pending_validation') return;
  deps.revalidations?.inc({ outcome: verdict.outcome });
  if (after.status === 'pending_validation' && after.intake_next_attempt_at === null) {
    deps.revalidations?.inc({ outcome: 'exhausted' });
    deps.logger?.warn(
      {
        job: 'pending-funds-revalidation',
        pending_funds_id: id,
        intake_attempts: after.intake_attempts,
        last_outcome: verdict.outcome,
        expires_at: after.expires_at,
      },
      'pending funds could not be validated after the last intake attempt; left to expire at the TTL (intake_validation_unverified)',
    );
  }
}
