import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { Db, Executor, Trx } from '../../db/database.ts';
import type { ExpectedTransfer } from '../ledger/reconcile.ts';
import { OWNERSHIP, ownedBy, type OwnershipRule } from '../../http/ownership.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { listPage } from '../../http/pagination.ts';
import type { Clock } from '../../lib/clock.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { recordEvent } from '../events/outbox.ts';
import { accounts, type Ledger } from '../ledger/port.ts';
import type { ReceiptValidator, ValidatorVerdict } from '../validators/port.ts';
import { presentAudit, presentAuditFull, presentPendingFunds, type PendingFundsView } from './present.ts';
import { decodeReceipt, RECEIVER_CONFIRM_CODES } from '../validators/receipt.ts';
import { judgeSlip, slipOwner } from '../validators/slips.ts';
import {
  AWAITING_RECEIVER,
  dueMove,
  MAX_ATTEMPTS_REASON,
  refusal,
  transition,
  WINDOW_EXPIRED_REASON,
} from './state.ts';
import type { PendingFundsRow, PendingFundsStatus, ReceiverAccount } from './tables.ts';
import { passedDeadline, pendingFundsLedgerUnavailable } from './errors.ts';

export interface PendingFundsDeps {
  db: Db;
  clock: Clock;
  ledger: Ledger;
  validator: ReceiptValidator;
  max_attempts: number;
  ttl_hours: number;
  window_hours: number;
  /** Intake validator calls in all (default INTAKE_MAX_ATTEMPTS) and the backoff base (default INTAKE_RETRY_BASE_MS). */
  intake_max_attempts?: number | undefined;
  intake_retry_base_ms?: number | undefined;
  /** `mpay_pending_funds_revalidations_total{outcome}` (revalidation.ts). */
  revalidations?: Counter<'outcome'> | undefined;
  logger?: Logger | undefined;
}

const HOUR_MS = 3600_000;

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
  const { verdict } = await judgeSlip(deps, {
    owner: slipOwner.pendingFunds(row.id),
    image,
    content_type,
    expect: {
      ...(row.fiat_amount_minor !== null ? { expected_amount_minor: row.fiat_amount_minor } : {}),
      ...(row.fiat_currency !== null ? { currency: row.fiat_currency } : {}),
      ...(row.receiver_account ? { receiver: row.receiver_account } : {}),
    },
  });
  return verdict;
}

async function writeAudit(
  trx: Trx,
  at: Date,
  entry: {
    row: PendingFundsRow;
    stage: 'intake' | 'receiver_confirm';
    verdict: ValidatorVerdict;
    receipt_sha256: string;
    content_type: string;
    status_after: string;
    applied: boolean;
    actor_merchant_id: string | null;
  },
): Promise<string> {
  const id = randomUUID();
  await trx
    .insertInto('receiver_confirm_audit')
    .values({
      id,
      pending_funds_id: entry.row.id,
      stage: entry.stage,
      outcome: entry.verdict.outcome,
      validator_kind: entry.verdict.validator_kind,
      validator_response: JSON.stringify(entry.verdict.response),
      failure_reason: entry.verdict.reason ?? null,
      observed_amount_minor: entry.verdict.observed_amount_minor ?? null,
      provider_reference: entry.verdict.reference ?? null,
      receipt_sha256: entry.receipt_sha256,
      content_type: entry.content_type,
      status_before: entry.row.status,
      status_after: entry.status_after,
      applied: entry.applied,
      actor_merchant_id: entry.actor_merchant_id,
      created_at: at,
    })
    .execute();
  return id;
}

async function emit(trx: Trx, at: Date, row: PendingFundsRow, type: string): Promise<void> {
  await recordEvent(trx, at, {
    merchant_id: row.receiver_merchant_id,
    is_sandbox: row.is_sandbox,
    type,
    resource_type: 'pending_funds',
    resource_id: row.id,
    data: presentPendingFunds(row) as unknown as Record<string, unknown>,
  });
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
  const current = await trx
    .selectFrom('pending_funds')
    .selectAll()
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirstOrThrow();
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
    await emit(trx, at, next, next.status === 'failed' ? 'pending_funds.failed' : 'pending_funds.validated');
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

/** The caller's own row by the one ownership rule: a read of another merchant's row is 404, a confirm 403 (contract 4.3). */
async function loadForReceiver(
  deps: Pick<PendingFundsDeps, 'db'>,
  scope: MerchantScope,
  id: string,
  rule: OwnershipRule,
): Promise<PendingFundsRow> {
  const row = await deps.db.selectFrom('pending_funds').selectAll().where('id', '=', id).executeTakeFirst();
  return ownedBy(row, (found) => found.receiver_merchant_id, scope, rule);
}

export async function getPendingFunds(
  deps: Pick<PendingFundsDeps, 'db'>,
  scope: MerchantScope,
  id: string,
): Promise<PendingFundsView> {
  const row = await loadForReceiver(deps, scope, id, OWNERSHIP.pending_funds);
  return presentPendingFunds(row);
}

export async function listPendingFunds(
  deps: Pick<PendingFundsDeps, 'db'>,
  scope: MerchantScope,
  query: { status?: PendingFundsStatus[] | undefined; cursor?: string | undefined; limit: number },
) {
  let builder = deps.db
    .selectFrom('pending_funds')
    .selectAll()
    .where('receiver_merchant_id', '=', scope.merchant_id)
    .where('is_sandbox', '=', scope.is_sandbox);
  if (query.status?.length) builder = builder.where('status', 'in', query.status);
  return listPage(builder, query, presentPendingFunds);
}

export interface ReceiverConfirmResult {
  outcome: ValidatorVerdict['outcome'];
  reason: string | null;
  audit_id: string;
  pending_funds: PendingFundsView;
}

/**
 * `POST /v1/pending-funds/{id}/receiver-confirm`, the contract's rules in precedence order:
 * 3. a malformed body (content type, then base64) is 400 before anything is read, with no validator call and
 *    no audit row; then 404 for an unknown row; 1. 403 PENDING_FUNDS_NOT_RECEIVER for anyone but the receiver;
 * 2. 409 outside `validated_pending_receiver_confirm` (PENDING_FUNDS_TERMINAL for a terminal row,
 *    PENDING_FUNDS_VALIDATION_UNVERIFIED otherwise; a row past its TTL or window is swept first).
 * The validator runs outside any transaction; then one transaction locks the row and writes 4. the audit row
 * together with the status change and, on `verified`, the mint (key = row id, last, so that 5. a ledger failure
 * rolls everything back: 502, no audit row, no attempt used). A call whose row changed status while the
 * validator ran is still audited (`applied: false`) and answered 409.
 */
export async function receiverConfirm(
  deps: PendingFundsDeps,
  scope: MerchantScope,
  id: string,
  body: { receipt_base64: string; content_type: string },
): Promise<ReceiverConfirmResult> {
  const image = decodeReceipt(body, RECEIVER_CONFIRM_CODES);
  const content_type = body.content_type.toLowerCase();
  const row = await loadForReceiver(deps, scope, id, OWNERSHIP.pending_funds_confirm);
  if (dueMove(row, deps.clock.now())) {
    await sweepOne(deps, row.id);
    throw passedDeadline(row.id);
  }
  const refused = refusal(row);
  if (refused) throw refused;

  const verdict = await askValidator(deps, image, content_type, row);
  const receipt_sha256 = sha256Hex(image);

  const outcome = await deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const current = await trx
      .selectFrom('pending_funds')
      .selectAll()
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const late = refusal(current) ?? (dueMove(current, now) ? passedDeadline(id) : null);
    if (late) {
      const audit_id = await writeAudit(trx, now, {
        row: current,
        stage: 'receiver_confirm',
        verdict,
        receipt_sha256,
        content_type,
        status_after: current.status,
        applied: false,
        actor_merchant_id: scope.merchant_id,
      });
      return { error: late, audit_id };
    }

    const first_attempt_at = current.first_receiver_attempt_at ?? now;
    const counters = {
      attempts: current.attempts + 1,
      first_receiver_attempt_at: first_attempt_at,
      receiver_window_expires_at:
        current.receiver_window_expires_at ?? new Date(first_attempt_at.getTime() + deps.window_hours * HOUR_MS),
      validator_kind: verdict.validator_kind,
    };
    let next: PendingFundsRow;
    let event: string | null = null;
    if (verdict.outcome === 'verified') {
      // The row id is the mint key, so the HTTP ledger's retry after a failed commit replays instead of minting twice.
      next = await transition(trx, current, 'confirmed', now, { ...counters, ledger_transfer_id: randomUUID() });
      event = 'pending_funds.confirmed';
    } else if (verdict.outcome === 'failed') {
      next = await transition(trx, current, 'failed', now, {
        ...counters,
        failure_reason: verdict.reason ?? 'validator_failed',
      });
      event = 'pending_funds.failed';
    } else if (verdict.outcome === 'unverified') {
      const unverified_attempts = current.unverified_attempts + 1;
      const exhausted = unverified_attempts >= deps.max_attempts;
      next = await transition(trx, current, exhausted ? 'failed' : AWAITING_RECEIVER, now, {
        ...counters,
        unverified_attempts,
        ...(exhausted ? { failure_reason: MAX_ATTEMPTS_REASON } : {}),
      });
      if (exhausted) event = 'pending_funds.failed';
    } else {
      next = await transition(trx, current, AWAITING_RECEIVER, now, counters);
    }
    const audit_id = await writeAudit(trx, now, {
      row: current,
      stage: 'receiver_confirm',
      verdict,
      receipt_sha256,
      content_type,
      status_after: next.status,
      applied: true,
      actor_merchant_id: scope.merchant_id,
    });
    if (event) await emit(trx, now, next, event);

    if (verdict.outcome === 'verified') {
      try {
        const transfer = await deps.ledger.transfer(
          {
            key: current.id,
            kind: 'mint',
            debit_account: accounts.world(current.is_sandbox),
            credit_account: accounts.merchantAvailable(current.receiver_merchant_id, current.is_sandbox),
            amount_micro_pay: current.amount_minor,
            memo: `pending funds ${current.id}`,
          },
          { trx },
        );
        next = await trx
          .updateTable('pending_funds')
          .set({ ledger_transfer_id: transfer.id })
          .where('id', '=', current.id)
          .returningAll()
          .executeTakeFirstOrThrow();
      } catch (error) {
        if (error instanceof AppError && error.code === 'LEDGER_UNAVAILABLE') {
          throw pendingFundsLedgerUnavailable();
        }
        throw error;
      }
    }
    return {
      result: {
        outcome: verdict.outcome,
        reason: verdict.reason ?? null,
        audit_id,
        pending_funds: presentPendingFunds(next),
      },
    };
  });
  if ('error' in outcome) throw outcome.error;
  return outcome.result;
}

/** Applies the due sweep move to one row, under its lock. */
async function sweepOne(deps: Pick<PendingFundsDeps, 'db' | 'clock'>, id: string): Promise<boolean> {
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
    await emit(trx, now, next, move === 'failed' ? 'pending_funds.failed' : 'pending_funds.expired');
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

/** Sum of a merchant's rows awaiting receiver confirmation: the balance's net obligation. */
export async function netObligationMicroPay(db: Db, merchant_id: string, is_sandbox: boolean): Promise<number> {
  const row = await db
    .selectFrom('pending_funds')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('amount_minor'), eb.val('0')).as('total'))
    .where('receiver_merchant_id', '=', merchant_id)
    .where('is_sandbox', '=', is_sandbox)
    .where('status', '=', AWAITING_RECEIVER)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

export interface AuditQuery {
  outcome?: string[] | undefined;
  pending_funds_id?: string | undefined;
  validator_kind?: string | undefined;
  stage?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

type AuditTable = 'receiver_confirm_audit' | 'receiver_confirm_audit_archive';

/** Newest first; with `include_archived`, rows the audit-archival job moved to the archive too. */
export async function listAudit(db: Db, query: AuditQuery & { include_archived?: boolean | undefined }) {
  const from = (table: AuditTable) => {
    // The archive has the same columns plus archived_at, which selectAll() returns too (presentAudit shows it).
    let builder = db.selectFrom(table as 'receiver_confirm_audit').selectAll();
    // An archived row stays in its table beside its archive copy: it is listed once, from the archive.
    if (table === 'receiver_confirm_audit') {
      builder = builder.where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('receiver_confirm_audit_archive as copy')
              .select('copy.id')
              .whereRef('copy.id', '=', 'receiver_confirm_audit.id'),
          ),
        ),
      );
    }
    if (query.outcome?.length) builder = builder.where('outcome', 'in', query.outcome as ValidatorVerdict['outcome'][]);
    if (query.pending_funds_id) builder = builder.where('pending_funds_id', '=', query.pending_funds_id);
    if (query.validator_kind)
      builder = builder.where('validator_kind', '=', query.validator_kind as ValidatorVerdict['validator_kind']);
    // Receiver-confirm rows unless asked otherwise: rows per pending_funds_id then equal receiver-confirm calls.
    const stage = query.stage ?? 'receiver_confirm';
    if (stage !== 'all') builder = builder.where('stage', '=', stage as 'intake' | 'receiver_confirm');
    return builder;
  };
  return listPage(
    query.include_archived
      ? [from('receiver_confirm_audit'), from('receiver_confirm_audit_archive')]
      : from('receiver_confirm_audit'),
    query,
    presentAudit,
  );
}

/** A row by id, archived or not (an archived one is its archive copy, with `archived: true`); `include_archived` is accepted as before. */
export async function getAudit(db: Db, id: string, _include_archived = false) {
  const row =
    (await db.selectFrom('receiver_confirm_audit_archive').selectAll().where('id', '=', id).executeTakeFirst()) ??
    (await db.selectFrom('receiver_confirm_audit').selectAll().where('id', '=', id).executeTakeFirst());
  if (!row) throw notFound('Audit row');
  return presentAuditFull(row);
}

/** The mint each confirmed row implies (key = row id, world account -> the receiver's available PAY). */
export async function pendingFundsExpectations(executor: Executor): Promise<ExpectedTransfer[]> {
  const rows = await executor
    .selectFrom('pending_funds')
    .select(['id', 'is_sandbox', 'receiver_merchant_id', 'amount_minor'])
    .where('status', '=', 'confirmed')
    .execute();
  return rows.map((row) => ({
    key: row.id,
    kind: 'mint' as const,
    debit_account: accounts.world(row.is_sandbox),
    credit_account: accounts.merchantAvailable(row.receiver_merchant_id, row.is_sandbox),
    amount_micro_pay: Number(row.amount_minor),
    cause: 'pending_funds' as const,
    rows: [{ table: 'pending_funds', id: row.id }],
  }));
}
