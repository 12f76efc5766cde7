import { randomUUID } from 'node:crypto';
import { OWNERSHIP } from '../../http/ownership.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import { AppError } from '../../lib/errors.ts';
import { accounts, type TransferCommand } from '../ledger/port.ts';
import type { ValidatorVerdict } from '../validators/port.ts';
import { decodeReceipt, RECEIVER_CONFIRM_CODES } from '../validators/receipt.ts';
import { writeAudit } from './audit.ts';
import { HOUR_MS, type PendingFundsDeps } from './deps.ts';
import { passedDeadline, pendingFundsLedgerUnavailable } from './errors.ts';
import { askValidator } from './intake.ts';
import { presentPendingFunds, type PendingFundsView } from './present.ts';
import { loadForReceiver } from './reads.ts';
import {
  AWAITING_RECEIVER,
  dueMove,
  emitPendingFundsEvent,
  lockPendingFunds,
  MAX_ATTEMPTS_REASON,
  refusal,
  transition,
} from './state.ts';
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
    const current = await lockPendingFunds(trx, id);
    const audit = (status_after: string, applied: boolean) =>
      writeAudit(trx, now, {
        row: current,
        stage: 'receiver_confirm',
        verdict,
        receipt_sha256,
        content_type,
        status_after,
        applied,
        actor_merchant_id: scope.merchant_id,
      });
    const late = refusal(current) ?? (dueMove(current, now) ? passedDeadline(id) : null);
    if (late) {
      return { error: late, audit_id: await audit(current.status, false) };
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
    const audit_id = await audit(next.status, true);
    if (event) await emitPendingFundsEvent(trx, now, next, event);

    if (verdict.outcome === 'verified') {
      try {
        const transfer = await deps.ledger.transfer(
          { ...confirmationMint(current), memo: `pending funds ${current.id}` },
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
