import { randomUUID } from 'node:crypto';
import type { Trx } from '../../db/database.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import { notFound } from '../../lib/errors.ts';
import type { ValidatorVerdict } from '../validators/port.ts';
import { decodeReceipt, RECEIVER_CONFIRM_CODES } from '../validators/receipt.ts';
import { judgeSlip, type SlipQuestion, slipOwner } from '../validators/slips.ts';
import { writeAudit } from './audit.ts';
import { HOUR_MS, type PendingFundsDeps } from './deps.ts';
import { presentPendingFunds, type PendingFundsView } from './present.ts';
import { AWAITING_RECEIVER, emitPendingFundsEvent, lockPendingFunds, transition } from './state.ts';
import type { PendingFundsRow, ReceiverAccount } from './tables.ts';

export interface NewPendingFunds {
  receiver_merchant_id: string;
  amount_minor: number;
  payer_reference: string;
  receipt_base64: string;
  content_type: string;
  fiat_amount_minor?: number | undefined;
  fiat_currency?: string | undefined;
  receiver_account?: ReceiverAccount | undefined;
}

/** The slips ledger's question for a receipt shown for this row: what the slip must show to pay it. */
export function slipQuestionOf(row: PendingFundsRow, image: Uint8Array, content_type: string): SlipQuestion {
  return {
    owner: slipOwner.pendingFunds(row.id),
    is_sandbox: row.is_sandbox,
    image,
    content_type,
    expect: {
      ...(row.fiat_amount_minor !== null ? { expected_amount_minor: row.fiat_amount_minor } : {}),
      ...(row.fiat_currency !== null ? { currency: row.fiat_currency } : {}),
      ...(row.receiver_account ? { receiver: row.receiver_account } : {}),
    },
  };
}

/**
 * Judges a receipt for this row through the slips ledger: a verdict stored for the same slip of this row (an earlier
 * intake, or a receiver-confirm whose mint failed) is reused, a slip accepted elsewhere is `duplicate_slip`.
 */
export async function askValidator(
  deps: Pick<PendingFundsDeps, 'db' | 'clock' | 'validator'>,
  image: Uint8Array,
  content_type: string,
  row: PendingFundsRow,
): Promise<ValidatorVerdict> {
  const { verdict } = await judgeSlip(deps, slipQuestionOf(row, image, content_type));
  return verdict;
}

/** Intake validator calls in all (the first at intake, then background revalidations) before the row is left to its TTL. */
export const INTAKE_MAX_ATTEMPTS = 6;
/** Wait before the n-th revalidation: INTAKE_RETRY_BASE_MS * 2^(n-1) (5, 10, 20, 40, 80 min: about 2.6 h in all). */
export const INTAKE_RETRY_BASE_MS = 5 * 60_000;
/** Why a row that never passed intake validation expired (its audit rows hold each attempt). */
export const INTAKE_UNVERIFIED_REASON = 'intake_validation_unverified';

/** When the next intake validation is due after `attempts` calls that were unverified or timed out; null when none is. */
export function nextIntakeAttemptAt(
  attempts: number,
  at: Date,
  max_attempts = INTAKE_MAX_ATTEMPTS,
  base_ms = INTAKE_RETRY_BASE_MS,
): Date | null {
  if (attempts >= max_attempts) return null;
  return new Date(at.getTime() + base_ms * 2 ** (attempts - 1));
}

export interface IntakeAttempt {
  verdict: ValidatorVerdict;
  receipt_sha256: string;
  content_type: string;
  /** When the row should be validated again if this verdict leaves it `pending_validation` (null: never). */
  next_attempt_at: Date | null;
}

/**
 * Applies one intake validator verdict under the row lock, with its intake-stage audit row (receiver-confirm rows are
 * another stage): verified -> `validated_pending_receiver_confirm` (`pending_funds.validated`), failed -> `failed`
 * (reason = the validator's code, `pending_funds.failed`), unverified or timeout -> stays `pending_validation` with
 * the next attempt scheduled (or none). A row that left `pending_validation` meanwhile is audited with `applied: false`.
 */
export async function applyIntakeVerdict(
  trx: Trx,
  id: string,
  at: Date,
  attempt: IntakeAttempt,
): Promise<{ before: PendingFundsRow; after: PendingFundsRow }> {
  const { verdict } = attempt;
  const current = await lockPendingFunds(trx, id);
  const applies = current.status === 'pending_validation';
  let next = current;
  if (applies) {
    const intake = {
      intake_attempts: current.intake_attempts + 1,
      intake_claimed_until: null,
      validator_kind: verdict.validator_kind,
    };
    if (verdict.outcome === 'verified') {
      next = await transition(trx, current, AWAITING_RECEIVER, at, { ...intake, intake_next_attempt_at: null });
    } else if (verdict.outcome === 'failed') {
      next = await transition(trx, current, 'failed', at, {
        ...intake,
        intake_next_attempt_at: null,
        failure_reason: verdict.reason ?? 'validator_failed',
      });
    } else {
      next = await trx
        .updateTable('pending_funds')
        .set({ ...intake, intake_next_attempt_at: attempt.next_attempt_at, updated_at: at })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
    }
  }
  await writeAudit(trx, at, {
    row: current,
    stage: 'intake',
    verdict,
    receipt_sha256: attempt.receipt_sha256,
    content_type: attempt.content_type,
    status_after: next.status,
    applied: applies,
    actor_merchant_id: null,
  });
  if (next.status !== current.status)
    await emitPendingFundsEvent(
      trx,
      at,
      next,
      next.status === 'failed' ? 'pending_funds.failed' : 'pending_funds.validated',
    );
  return { before: current, after: next };
}

/**
 * `POST /internal/pending-funds`: records the row as `pending_validation` with its receipt bytes, runs the validator
 * outside any transaction, then applies its verdict (applyIntakeVerdict). Unverified or timeout leaves the row
 * `pending_validation` and the `pending-funds-revalidation` job asks the validator again with backoff
 * (revalidation.ts); a row still unvalidated at its TTL expires (`intake_validation_unverified`).
 */
export async function createPendingFunds(deps: PendingFundsDeps, input: NewPendingFunds): Promise<PendingFundsView> {
  const image = decodeReceipt(input, RECEIVER_CONFIRM_CODES);
  const now = deps.clock.now();
  const merchant = await deps.db
    .selectFrom('merchants')
    .select('id')
    .where('id', '=', input.receiver_merchant_id)
    .executeTakeFirst();
  if (!merchant) throw notFound('Receiver merchant');
  const row: PendingFundsRow = {
    id: randomUUID(),
    receiver_merchant_id: input.receiver_merchant_id,
    is_sandbox: false,
    status: 'pending_validation',
    amount_minor: input.amount_minor,
    payer_reference: input.payer_reference,
    fiat_amount_minor: input.fiat_amount_minor ?? null,
    fiat_currency: input.fiat_currency ?? null,
    receiver_account: input.receiver_account ?? null,
    receipt_sha256: sha256Hex(image),
    content_type: input.content_type.toLowerCase(),
    validator_kind: null,
    attempts: 0,
    unverified_attempts: 0,
    failure_reason: null,
    ledger_transfer_id: null,
    expires_at: new Date(now.getTime() + deps.ttl_hours * HOUR_MS),
    first_receiver_attempt_at: null,
    receiver_window_expires_at: null,
    created_at: now,
    updated_at: now,
    validated_at: null,
    confirmed_at: null,
    failed_at: null,
    expired_at: null,
    intake_attempts: 0,
    intake_next_attempt_at: null,
    intake_claimed_until: null,
  };
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('pending_funds')
      .values({ ...row, receiver_account: row.receiver_account === null ? null : JSON.stringify(row.receiver_account) })
      .execute();
    // The bytes stay, so a validator that could not answer now can be asked again later.
    await trx
      .insertInto('pending_funds_receipts')
      .values({
        pending_funds_id: row.id,
        data: image,
        content_type: row.content_type,
        sha256: row.receipt_sha256,
        created_at: now,
      })
      .execute();
  });

  const verdict = await askValidator(deps, image, row.content_type, row);
  const applied_at = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const { after } = await applyIntakeVerdict(trx, row.id, applied_at, {
      verdict,
      receipt_sha256: row.receipt_sha256,
      content_type: row.content_type,
      next_attempt_at: nextIntakeAttemptAt(1, applied_at, deps.intake_max_attempts, deps.intake_retry_base_ms),
    });
    return presentPendingFunds(after);
  });
}
