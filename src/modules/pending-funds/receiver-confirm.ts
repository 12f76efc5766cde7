import { sql } from 'kysely';
import type { Trx } from '../../db/database.ts';
import { isDatabaseTooSlow } from '../../db/resilience.ts';
import { OWNERSHIP } from '../../http/ownership.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { AppError } from '../../lib/errors.ts';
import { GroupCommit } from '../../lib/group-commit.ts';
import { recordEvents, type NewEvent } from '../events/outbox.ts';
import { accounts, type TransferCommand } from '../ledger/port.ts';
import type { ValidatorVerdict } from '../validators/port.ts';
import {
  asksProvider,
  isUniqueViolation,
  judgeSlip,
  judgeSlipsLocally,
  type LocalJudgement,
  type ReadQuestion,
  readQuestion,
  type SlipWrite,
  storeSlips,
} from '../validators/slips.ts';
import { decodeReceipt, RECEIVER_CONFIRM_CODES } from '../validators/receipt.ts';
import { type AuditEntry, writeAudits } from './audit.ts';
import { HOUR_MS, type PendingFundsDeps } from './deps.ts';
import { passedDeadline, pendingFundsLedgerUnavailable } from './errors.ts';
import { slipQuestionOf } from './intake.ts';
import { presentPendingFunds, type PendingFundsView } from './present.ts';
import { loadForReceiver } from './reads.ts';
import { AWAITING_RECEIVER, dueMove, MAX_ATTEMPTS_REASON, movedRow, refusal } from './state.ts';
import { sweepOne } from './sweep.ts';
import type { PendingFundsRow } from './tables.ts';

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
 * A validator that asks a provider runs outside any transaction, one that reads the receipt locally in the batch's
 * transaction; the confirm joins the next batch (applyConfirms), whose one transaction locks its rows and writes 4.
 * each confirm's verdict and audit row together with its status change and, on `verified`, the mint (key = row id),
 * so that 5. a ledger failure rolls everything back: 502, no audit row, no attempt used (the verdict is kept for the
 * retry). A call whose row changed status while the validator ran is still audited (`applied: false`) and answered
 * 409.
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

  // A provider's verdict is stored (its ask counted first) before the confirm waits for its batch; a receipt read
  // locally is judged by the batch, its verdict written in the batch's transaction.
  const question = slipQuestionOf(row, image, content_type);
  const judged = asksProvider(deps.validator) ? await judgeSlip(deps, question) : null;
  // the receipt's hash and QR are read here, beside the batch in flight, not in the next one
  const read = judged ? null : await readQuestion(question);
  const answer = await confirmsOf(deps).submit({
    id,
    verdict: judged?.verdict ?? null,
    read,
    receipt_sha256: (judged ?? (read as ReadQuestion)).sha256,
    content_type,
    actor_merchant_id: scope.merchant_id,
  });
  if ('error' in answer) throw answer.error;
  return answer.result;
}

/** One confirm waiting for its batch: with the verdict the slips ledger stored, or the question the batch judges. */
interface ConfirmItem {
  id: string;
  verdict: ValidatorVerdict | null;
  read: ReadQuestion | null;
  receipt_sha256: string;
  content_type: string;
  actor_merchant_id: string;
}

/** A confirm's own answer: its result, or its 409 with the audit row that recorded it as not applied. */
type ConfirmAnswer = { result: ReceiverConfirmResult } | { error: AppError; audit_id: string };

/** One batcher per deps object (each started pending-funds module has its own), made on first use. */
const batchers = new WeakMap<PendingFundsDeps, GroupCommit<ConfirmItem, ConfirmAnswer>>();

function confirmsOf(deps: PendingFundsDeps): GroupCommit<ConfirmItem, ConfirmAnswer> {
  let group = batchers.get(deps);
  if (!group) {
    group = new GroupCommit((items) => applyConfirms(deps, items), {
      // one batch at a time: batches that share a receiver would queue on its available account's lock in the mint
      // anyway, so the next batch gathers everything that arrives meanwhile instead (larger batches, no batch holding
      // its rows locked while it waits for another's commit; measured: less CPU per confirm than two in flight)
      max_in_flight: 1,
      max_batch: 64,
      // a batch that fails (a ledger outage, a deadlock) runs its confirms alone: one confirm never fails another
      onBatchFailed: (error, items) =>
        deps.logger?.debug({ err: error, confirms: items.length }, 'receiver-confirm batch failed; confirms run alone'),
      refusesEveryItem: isDatabaseTooSlow,
    });
    batchers.set(deps, group);
  }
  return group;
}

/** A confirm whose verdict is known. */
type JudgedItem = ConfirmItem & { verdict: ValidatorVerdict };

/** What one confirm of a batch does to its row, decided in memory under the batch's locks. */
interface Planned {
  item: JudgedItem;
  /** The row as this confirm found it (after the confirms before it in the batch). */
  current: PendingFundsRow;
  next: PendingFundsRow;
  /** The 409 of a confirm that came too late (the row left the status, or passed its deadline). */
  late: AppError | null;
  event: string | null;
}

/**
 * The verdicts of a batch's confirms: a provider's stored one as it is; the receipts read locally as the slips
 * ledger judged them together, their verdicts added to `slips` to be written in the batch's transaction.
 */
function verdictsOf(items: readonly ConfirmItem[], local: readonly LocalJudgement[], slips: SlipWrite[]): JudgedItem[] {
  let next = 0;
  return items.map((item): JudgedItem => {
    if (item.verdict) return { ...item, verdict: item.verdict };
    const judgement = local[next++] as LocalJudgement;
    if (judgement.write) slips.push(judgement.write);
    return { ...item, verdict: judgement.answer.verdict };
  });
}

/**
 * A batch of confirms. A confirm alone whose transaction fails (a ledger outage: 502) still stores its verdict, as
 * `judgeSlip` does before any action, so its retry reuses it. A slip another owner accepted between the batch's read
 * of the slips ledger and its write fails the write on the accepted-identity index: a batch fails as a whole (its
 * confirms then run alone), and a confirm alone is judged once more by `judgeSlip`, which sees the accepted slip (or
 * waits out the transaction that accepts it) and stores its own verdict.
 */
async function applyConfirms(deps: PendingFundsDeps, items: readonly ConfirmItem[]): Promise<ConfirmAnswer[]> {
  const slips: SlipWrite[] = [];
  try {
    return await applyBatch(deps, items, slips);
  } catch (error) {
    const [item] = items;
    if (items.length !== 1 || !item?.read) throw error;
    if (!isUniqueViolation(error)) {
      await deps.db
        .transaction()
        .execute((trx) => storeSlips(trx, deps.clock.now(), slips))
        .catch((stored: unknown) => deps.logger?.warn({ err: stored }, 'receiver-confirm verdict not stored'));
      throw error;
    }
    const { verdict } = await judgeSlip(deps, item.read.question);
    return applyBatch(deps, [{ ...item, verdict, read: null }], []);
  }
}

/**
 * One transaction for a batch of confirms: their rows locked in id order (so two batches never deadlock) while the
 * slips ledger reads the receipts' stored verdicts, each confirm decided in arrival order against its row as the
 * confirms before it left it (a second confirm of a row sees the first's move), then the mints in one ledger call,
 * the verdicts, every audit row in one INSERT, every row's final state in one UPDATE and every event in one INSERT.
 * The mints go first so that each confirmed row is written once, with the transfer id the ledger gave. Any failure
 * rolls the whole batch back and GroupCommit runs its confirms alone, where a ledger failure answers that confirm's
 * 502 with nothing written but its verdict.
 */
async function applyBatch(
  deps: PendingFundsDeps,
  items: readonly ConfirmItem[],
  slips: SlipWrite[],
): Promise<ConfirmAnswer[]> {
  return deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const ids = [...new Set(items.map((item) => item.id))].sort();
    const [locked, local] = await allInTransaction([
      trx.selectFrom('pending_funds').selectAll().where('id', 'in', ids).orderBy('id').forUpdate().execute(),
      judgeSlipsLocally(
        deps,
        items.flatMap((item) => (item.read ? [item.read] : [])),
        trx,
      ),
    ]);
    const judged = verdictsOf(items, local, slips);
    const rows = new Map(locked.map((row) => [row.id, row]));
    const planned = judged.map((item): Planned => {
      const current = rows.get(item.id);
      if (!current) throw new Error(`pending-funds row ${item.id} vanished before its confirm`);
      const step = decide(deps, item, current, now);
      rows.set(item.id, step.next);
      return step;
    });

    const minting = planned.filter((step) => step.item.verdict.outcome === 'verified' && !step.late);
    const mint = async () => {
      if (minting.length === 0) return;
      let transfers: { id: string }[];
      try {
        transfers = await deps.ledger.transferAll(
          minting.map((step) => ({ ...confirmationMint(step.current), memo: `pending funds ${step.current.id}` })),
          { trx },
        );
      } catch (error) {
        if (error instanceof AppError && error.code === 'LEDGER_UNAVAILABLE') throw pendingFundsLedgerUnavailable();
        throw error;
      }
      for (const [index, step] of minting.entries()) {
        step.next = { ...step.next, ledger_transfer_id: (transfers[index] as { id: string }).id };
        rows.set(step.next.id, step.next);
      }
    };
    // The mint, the verdicts and the audit rows go to the transaction's connection together, which runs them one
    // after another without waiting on this process; the moves and the events show the mint's transfer ids, so they
    // follow it: two waits for the batch's writes instead of five.
    const [, , audit_ids] = await allInTransaction([
      mint(),
      storeSlips(trx, now, slips),
      writeAudits(
        trx,
        now,
        planned.map(
          (step): AuditEntry => ({
            row: step.current,
            stage: 'receiver_confirm',
            verdict: step.item.verdict,
            receipt_sha256: step.item.receipt_sha256,
            content_type: step.item.content_type,
            status_after: step.next.status,
            applied: !step.late,
            actor_merchant_id: step.item.actor_merchant_id,
          }),
        ),
      ),
    ]);
    await allInTransaction([
      writeMoves(
        trx,
        locked.filter((row) => rows.get(row.id) !== row),
        rows,
      ),
      recordEvents(
        trx,
        now,
        planned.flatMap((step): NewEvent[] =>
          step.event
            ? [
                {
                  merchant_id: step.next.receiver_merchant_id,
                  is_sandbox: step.next.is_sandbox,
                  type: step.event,
                  resource_type: 'pending_funds',
                  resource_id: step.next.id,
                  data: presentPendingFunds(step.next) as unknown as Record<string, unknown>,
                },
              ]
            : [],
        ),
      ),
    ]);
    return planned.map((step, index): ConfirmAnswer => {
      const audit_id = audit_ids[index] as string;
      if (step.late) return { error: step.late, audit_id };
      return {
        result: {
          outcome: step.item.verdict.outcome,
          reason: step.item.verdict.reason ?? null,
          audit_id,
          pending_funds: presentPendingFunds(step.next),
        },
      };
    });
  });
}

/**
 * Statements sent on one transaction at once: every one settles before the batch goes on, and a failure is reported
 * as its own error, not as the "transaction is aborted" (25P02) that the statements queued behind it then meet.
 */
async function allInTransaction<const T extends readonly Promise<unknown>[]>(
  statements: T,
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(statements);
  const failures = settled.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
  const cause = failures.find((error) => (error as { code?: unknown } | null)?.code !== '25P02') ?? failures[0];
  if (failures.length > 0) throw cause;
  return settled.map((result) => (result as PromiseFulfilledResult<unknown>).value) as {
    -readonly [K in keyof T]: Awaited<T[K]>;
  };
}

/**
 * One confirm's move (the contract's rules): verified -> confirmed (minted by the batch); failed -> failed with the
 * validator's code; unverified counts towards max_attempts and fails the row at the last; timeout counts an attempt
 * only. Every applied confirm counts an attempt and opens the receiver window at the first.
 */
function decide(deps: PendingFundsDeps, item: JudgedItem, current: PendingFundsRow, now: Date): Planned {
  const late = refusal(current) ?? (dueMove(current, now) ? passedDeadline(current.id) : null);
  if (late) return { item, current, next: current, late, event: null };
  const { verdict } = item;
  const first_attempt_at = current.first_receiver_attempt_at ?? now;
  const counters = {
    attempts: current.attempts + 1,
    first_receiver_attempt_at: first_attempt_at,
    receiver_window_expires_at:
      current.receiver_window_expires_at ?? new Date(first_attempt_at.getTime() + deps.window_hours * HOUR_MS),
    validator_kind: verdict.validator_kind,
  };
  const step = (next: PendingFundsRow, event: string | null): Planned => ({ item, current, next, late: null, event });
  if (verdict.outcome === 'verified')
    return step(movedRow(current, 'confirmed', now, counters), 'pending_funds.confirmed');
  if (verdict.outcome === 'failed')
    return step(
      movedRow(current, 'failed', now, { ...counters, failure_reason: verdict.reason ?? 'validator_failed' }),
      'pending_funds.failed',
    );
  if (verdict.outcome === 'unverified') {
    const unverified_attempts = current.unverified_attempts + 1;
    const exhausted = unverified_attempts >= deps.max_attempts;
    const next = movedRow(current, exhausted ? 'failed' : AWAITING_RECEIVER, now, {
      ...counters,
      unverified_attempts,
      ...(exhausted ? { failure_reason: MAX_ATTEMPTS_REASON } : {}),
    });
    return step(next, exhausted ? 'pending_funds.failed' : null);
  }
  return step(movedRow(current, AWAITING_RECEIVER, now, counters), null);
}

/**
 * Every moved row's final state in one UPDATE (each row once, however many confirms of the batch moved it), guarded
 * by the status the batch locked it in.
 */
async function writeMoves(
  trx: Trx,
  moved: readonly PendingFundsRow[],
  rows: ReadonlyMap<string, PendingFundsRow>,
): Promise<void> {
  if (moved.length === 0) return;
  const values = moved.map((before) => {
    const row = rows.get(before.id) as PendingFundsRow;
    return {
      id: row.id,
      status_before: before.status,
      status: row.status,
      attempts: row.attempts,
      unverified_attempts: row.unverified_attempts,
      first_receiver_attempt_at: row.first_receiver_attempt_at,
      receiver_window_expires_at: row.receiver_window_expires_at,
      validator_kind: row.validator_kind,
      failure_reason: row.failure_reason,
      ledger_transfer_id: row.ledger_transfer_id,
      updated_at: row.updated_at,
      validated_at: row.validated_at,
      confirmed_at: row.confirmed_at,
      failed_at: row.failed_at,
    };
  });
  // the ids again as an array: the planner takes a jsonb recordset for 100 rows and would rather scan the table than
  // probe its key 100 times, where an array of the batch's ids is counted as it is
  const updated = await sql<{ id: string }>`
    update pending_funds as p set
      status = v.status, attempts = v.attempts, unverified_attempts = v.unverified_attempts,
      first_receiver_attempt_at = v.first_receiver_attempt_at, receiver_window_expires_at = v.receiver_window_expires_at,
      validator_kind = v.validator_kind, failure_reason = v.failure_reason, ledger_transfer_id = v.ledger_transfer_id,
      updated_at = v.updated_at, validated_at = v.validated_at, confirmed_at = v.confirmed_at, failed_at = v.failed_at
    from jsonb_to_recordset(${JSON.stringify(values)}::jsonb) as v(
      id uuid, status_before text, status text, attempts integer, unverified_attempts integer,
      first_receiver_attempt_at timestamptz, receiver_window_expires_at timestamptz, validator_kind text,
      failure_reason text, ledger_transfer_id uuid, updated_at timestamptz, validated_at timestamptz,
      confirmed_at timestamptz, failed_at timestamptz)
    where p.id = v.id and p.status = v.status_before and p.id = any(${values.map((value) => value.id)}::uuid[])
    returning p.id`.execute(trx);
  if (updated.rows.length !== moved.length)
    throw new AppError('PENDING_FUNDS_TERMINAL', 'A pending-funds row changed status concurrently');
}

/** The mint a confirmed row makes: key = row id, the world account -> the receiver's available PAY. */
function confirmationMint(
  row: Pick<PendingFundsRow, 'id' | 'is_sandbox' | 'receiver_merchant_id' | 'amount_minor'>,
): TransferCommand {
  return {
    key: row.id,
    kind: 'mint',
    debit_account: accounts.world(row.is_sandbox),
    credit_account: accounts.merchantAvailable(row.receiver_merchant_id, row.is_sandbox),
    amount_micro_pay: Number(row.amount_minor),
  };
}
