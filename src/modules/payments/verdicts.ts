import { workLeased } from '../../workers/lease.ts';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { SELLER_UNFUNDED, sellerOfAccount, sellerPayees, suspendSeller } from '../liquidity/service.ts';
import type { ReceiptValidator, ValidatorVerdict } from '../validators/port.ts';
import { judgeSlip, slipOwner } from '../validators/slips.ts';
import type { Trx } from '../../db/database.ts';
import { present } from '../../lib/assert.ts';
import type { PaymentsDeps } from './deps.ts';
import { emitLegAwaitingPayee, loadLegs } from './legs.ts';
import { decidePayment, endPayment } from './lifecycle.ts';
import type { PaymentRow, ProofRow } from './tables.ts';
import { lockPayment } from './state.ts';

const RETRY_BASE_MS = 30_000;
/** The longest wait between two checks of a slip whose provider did not answer. */
const RETRY_MAX_MS = 3_600_000;
const CLAIM_MS = 120_000;
const ERROR_RETRY_MS = 300_000;

export interface VerdictDeps extends PaymentsDeps {
  validator: ReceiptValidator;
  /** `ALLOW_UNVERIFIED_LIVE_PROOFS`: a verdict that checked neither amount nor payee completes a live leg. */
  allow_unverified_live_proofs?: boolean | undefined;
  /** `PROOF_CHECK_HOURS`: how long an unanswered check is retried before the leg waits for its payee. */
  proof_check_hours?: number | undefined;
  logger?: Logger | undefined;
  /** `mpay_payment_completion_failures_total{reason}`: the operator's alert on completions that could not post. */
  completion_failures?: Counter<'reason'> | undefined;
}

export function createVerdictMetrics(registry: Registry): Counter<'reason'> {
  return new Counter({
    name: 'mpay_payment_completion_failures_total',
    help: 'Verified payments whose completion could not post (reason: ledger_insufficient_funds, ledger_refused) or whose verdict pass threw (verdict_error)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
}

/**
 * Failure reason of a verified payment whose PAY could not move: the ledger refused the completion (the matched
 * sellers hold less PAY than the legs, e.g. a quote lock priced the legs below the sellers' funding rate). The buyer
 * has paid: the operator makes them whole by hand, alerted by the error log and the metric.
 */
export const COMPLETION_LEDGER_REFUSED = 'ledger_insufficient_funds';

/**
 * Whether a `verified` verdict is evidence that a live leg was paid (DESIGN 3b): a provider's verdict that checked the
 * amount, the payee and a new bank reference is; the local slip check (`slip_qr`, which cannot see amount or payee)
 * and `null_validator` (which checks nothing) are not, unless the operator opted in (`ALLOW_UNVERIFIED_LIVE_PROOFS`).
 */
export function isLiveEvidence(verdict: ValidatorVerdict, allow_unverified: boolean): boolean {
  if (verdict.outcome !== 'verified') return false;
  if (allow_unverified) return true;
  return verdict.validator_kind === 'easyslip' && (verdict.unverified_fields ?? []).length === 0;
}

/**
 * Worker pass: claims the leg slips of `confirming` payments (SKIP LOCKED, so several workers share the work), judges
 * each outside any transaction, then applies its verdict in one transaction: a verified slip that is evidence (a
 * provider's check, or any verdict in sandbox) verifies its leg, one that is not waits for its payee
 * (`awaiting_payee`, `leg.awaiting_payee`); a rejected slip rejects its leg; unverified/timeout are retried with
 * backoff for `PROOF_CHECK_HOURS`, then wait for the payee. The payment is then decided from its legs
 * (decidePayment: completed, partially_paid, failed, or still waiting).
 */
export async function processProofVerdicts(deps: VerdictDeps, batch = 10): Promise<number> {
  const claimed_at = deps.clock.now();
  return workLeased(deps.db, {
    pick: (trx) =>
      trx
        .selectFrom('payment_proofs as proof')
        .innerJoin('payments', 'payments.id', 'proof.payment_id')
        .select(['proof.id', 'proof.payment_id'])
        .where('payments.status', '=', 'confirming')
        .where((eb) => eb.or([eb('proof.verdict', 'is', null), eb('proof.verdict', 'in', ['unverified', 'timeout'])]))
        .where('proof.next_attempt_at', '<=', claimed_at)
        .where((eb) => eb.or([eb('proof.claimed_until', 'is', null), eb('proof.claimed_until', '<', claimed_at)]))
        .orderBy('proof.next_attempt_at')
        .limit(batch)
        .forUpdate('proof')
        .skipLocked()
        .execute(),
    lease: (trx, ids) =>
      trx
        .updateTable('payment_proofs')
        .set({ claimed_until: new Date(claimed_at.getTime() + CLAIM_MS) })
        .where('id', 'in', ids)
        .execute(),
    work: (claim) => processClaim(deps, claim),
    onError: async (claim, error) => {
      deps.completion_failures?.inc({ reason: 'verdict_error' });
      deps.logger?.error(
        { err: error, job: 'payment-verdicts', payment_id: claim.payment_id, proof_id: claim.id },
        'payment verdict could not be applied; retried with backoff',
      );
      await releaseClaimWithBackoff(deps, claim.id);
    },
  });
}

async function releaseClaimWithBackoff(deps: VerdictDeps, proof_id: string): Promise<void> {
  const now = deps.clock.now();
  await deps.db
    .updateTable('payment_proofs')
    .set((eb) => ({
      claimed_until: null,
      attempts: eb('attempts', '+', 1),
      // Not at once (that would be the silent hot loop), not never: an outage that ends lets the payment complete.
      next_attempt_at: new Date(now.getTime() + ERROR_RETRY_MS),
    }))
    .where('id', '=', proof_id)
    .execute();
}

/**
 * Judges one leg's slip through the slips ledger (its verdict stored before anything acts on it, so a retry after a
 * ledger failure or a crash reuses it) against that leg's own amount and payee, then applies the verdict.
 */
async function processClaim(deps: VerdictDeps, claim: { id: string; payment_id: string }): Promise<void> {
  const proof = await deps.db
    .selectFrom('payment_proofs')
    .selectAll()
    .where('id', '=', claim.id)
    .executeTakeFirstOrThrow();
  const payment = await deps.db
    .selectFrom('payments')
    .selectAll()
    .where('id', '=', claim.payment_id)
    .executeTakeFirstOrThrow();
  const legs = await loadLegs(deps.db, payment.id);
  const leg = present(
    legs.find((candidate) => candidate.match_order === proof.match_order),
    `proof ${proof.id} pays leg ${proof.match_order} of payment ${payment.id}`,
  );
  const payee = (await sellerPayees(deps.db, [leg.seller_id])).get(leg.seller_id)?.payee;
  const { verdict } = await judgeSlip(deps, {
    owner: slipOwner.paymentLeg(payment.id, leg.match_order),
    is_sandbox: payment.is_sandbox,
    image: proof.data,
    content_type: proof.content_type,
    expect: {
      expected_amount_minor: leg.allocated_fiat_amount,
      currency: payment.currency,
      receiver: {
        ...(payee?.promptpay_id ? { promptpay_id: payee.promptpay_id } : {}),
        ...(payee?.payid ? { payid: payee.payid } : {}),
        ...(payee?.bank ? { account_number: payee.bank.account_number, account_name: payee.bank.account_name } : {}),
      },
    },
  });
  try {
    await applyVerdict(deps, deps.clock, claim.id, verdict);
  } catch (error) {
    if (verdict.outcome !== 'verified' || !isLedgerRefusal(error)) throw error;
    await failUnpostableCompletion(deps, claim.id, verdict, error as AppError);
  }
}

/** A refusal that no retry can fix (as opposed to LEDGER_UNAVAILABLE, which is retried). */
export function isLedgerRefusal(error: unknown): boolean {
  return (
    error instanceof AppError &&
    (error.code === 'LEDGER_INSUFFICIENT_FUNDS' || error.code === 'LEDGER_IDEMPOTENCY_CONFLICT')
  );
}

/**
 * The completion transaction rolled back because the ledger refused it. Retrying would loop for ever, so the payment
 * fails visibly instead (`failed`, `failure_reason` = ledger_insufficient_funds, `payment.failed`, liquidity released),
 * in a new transaction, with an error log and `mpay_payment_completion_failures_total` for the operator; the seller the
 * ledger found short is taken out of matching until an operator funds it (`POST /admin/sellers/{id}/funding`).
 */
export async function failUnpostableCompletion(
  deps: PaymentsDeps & Pick<VerdictDeps, 'logger' | 'completion_failures'>,
  proof_id: string,
  verdict: ValidatorVerdict,
  refusal: AppError,
): Promise<void> {
  const now = deps.clock.now();
  const reason = refusal.code === 'LEDGER_INSUFFICIENT_FUNDS' ? COMPLETION_LEDGER_REFUSED : 'ledger_refused';
  const payment_id = await deps.db.transaction().execute(async (trx) => {
    const locked = await lockConfirmingProof(trx, proof_id);
    if (!locked) return undefined;
    const { proof, payment } = locked;
    await trx
      .updateTable('payment_proofs')
      .set({
        verdict: verdict.outcome,
        verdict_reason: reason,
        validator_kind: verdict.validator_kind,
        validator_response: JSON.stringify({
          ...verdict.response,
          completion_refused: { code: refusal.code, message: refusal.message },
        }),
        attempts: proof.attempts + 1,
        claimed_until: null,
      })
      .where('id', '=', proof_id)
      .execute();
    const legs = await loadLegs(trx, payment.id);
    await endPayment(deps, trx, payment, legs, now, 'failed', reason);
    // The seller whose PAY no longer covers its leg leaves matching until an operator funds it, so no next buyer
    // pays it and fails the same way.
    const unfunded = sellerOfAccount((refusal.details[0] as { account?: string } | undefined)?.account);
    if (unfunded && legs.some((leg) => leg.seller_id === unfunded))
      await suspendSeller(trx, unfunded, SELLER_UNFUNDED, now);
    return payment.id;
  });
  if (!payment_id) return;
  deps.completion_failures?.inc({ reason });
  deps.logger?.error(
    { job: 'payment-verdicts', payment_id, proof_id, code: refusal.code, details: refusal.details },
    'verified payment could not complete: the ledger refused the PAY move; the payment is failed and the buyer must be made whole by an operator',
  );
}

/**
 * One leg's verdict under the payment's lock, then the payment's decision (decidePayment). A live leg's `verified`
 * that is not evidence, and a check still unanswered after `PROOF_CHECK_HOURS`, make the leg wait for its payee
 * (`awaiting_payee`, `leg.awaiting_payee`); in sandbox an unanswered check then rejects the leg
 * (`unverifiable`), as there is no payee to ask.
 */
async function applyVerdict(
  deps: VerdictDeps,
  clock: Clock,
  proof_id: string,
  verdict: ValidatorVerdict,
): Promise<void> {
  const now = clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const locked = await lockConfirmingProof(trx, proof_id);
    if (!locked) return;
    const { proof, payment } = locked;
    const attempts = proof.attempts + 1;
    const retry = verdict.outcome === 'unverified' || verdict.outcome === 'timeout';
    const check_until = proof.created_at.getTime() + (deps.proof_check_hours ?? 24) * 3_600_000;
    const out_of_time = retry && now.getTime() >= check_until;
    let stored: ProofRow['verdict'] = verdict.outcome;
    let reason = verdict.reason ?? null;
    if (!payment.is_sandbox && verdict.outcome === 'verified') {
      if (!isLiveEvidence(verdict, deps.allow_unverified_live_proofs ?? false)) stored = 'awaiting_payee';
    } else if (out_of_time) {
      if (payment.is_sandbox) {
        stored = 'failed';
        reason = 'unverifiable';
      } else stored = 'awaiting_payee';
    }
    const backoff = Math.min(RETRY_BASE_MS * 2 ** Math.min(attempts - 1, 20), RETRY_MAX_MS);
    await trx
      .updateTable('payment_proofs')
      .set({
        verdict: stored,
        verdict_reason: reason,
        validator_kind: verdict.validator_kind,
        validator_response: JSON.stringify(verdict.response),
        attempts,
        claimed_until: null,
        next_attempt_at: new Date(Math.min(now.getTime() + backoff, Math.max(check_until, now.getTime()))),
        ...(stored === 'awaiting_payee' ? { awaiting_payee_at: now } : {}),
      })
      .where('id', '=', proof_id)
      .execute();
    const legs = await loadLegs(trx, payment.id);
    if (stored === 'awaiting_payee') await emitLegAwaitingPayee(trx, now, deps, payment, legs, proof.match_order);
    await decidePayment(deps, trx, payment, legs, now);
  });
}

/**
 * Locks a slip and then its payment; undefined when the payment has left `confirming` meanwhile (a verdict on it
 * no longer applies).
 */
async function lockConfirmingProof(
  trx: Trx,
  proof_id: string,
): Promise<{ proof: ProofRow; payment: PaymentRow } | undefined> {
  const proof = await trx
    .selectFrom('payment_proofs')
    .selectAll()
    .where('id', '=', proof_id)
    .forUpdate()
    .executeTakeFirstOrThrow();
  const payment = await lockPayment(trx, proof.payment_id);
  return payment?.status === 'confirming' ? { proof, payment } : undefined;
}
