import { iso } from '../../http/schemas.ts';
import type { PendingFundsAuditFullView, PendingFundsAuditView, PendingFundsView } from './schema.ts';
import type { AuditRow, PendingFundsRow } from './tables.ts';

export type { PendingFundsView } from './schema.ts';

export function presentPendingFunds(row: PendingFundsRow): PendingFundsView {
  return {
    id: row.id,
    receiver_merchant_id: row.receiver_merchant_id,
    status: row.status,
    amount_minor: row.amount_minor,
    failure_reason: row.failure_reason,
    payer_reference: row.payer_reference,
    fiat_amount_minor: row.fiat_amount_minor,
    fiat_currency: row.fiat_currency,
    validator_kind: row.validator_kind,
    attempts: row.attempts,
    unverified_attempts: row.unverified_attempts,
    expires_at: iso(row.expires_at),
    receiver_confirm_window_expires_at: iso(row.receiver_window_expires_at),
    ledger_transfer_id: row.ledger_transfer_id,
    is_sandbox: row.is_sandbox,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    validated_at: iso(row.validated_at),
    confirmed_at: iso(row.confirmed_at),
    failed_at: iso(row.failed_at),
    expired_at: iso(row.expired_at),
    intake_attempts: row.intake_attempts,
    next_intake_attempt_at: iso(row.intake_next_attempt_at),
  };
}

/** An audit row, live or archived (the archive adds `archived_at`). */
export function presentAudit(row: AuditRow & { archived_at?: Date | null }): PendingFundsAuditView {
  return {
    id: row.id,
    pending_funds_id: row.pending_funds_id,
    stage: row.stage,
    outcome: row.outcome,
    validator_kind: row.validator_kind,
    failure_reason: row.failure_reason,
    observed_amount_minor: row.observed_amount_minor,
    provider_reference: row.provider_reference,
    receipt_sha256: row.receipt_sha256,
    content_type: row.content_type,
    status_before: row.status_before,
    status_after: row.status_after,
    applied: row.applied,
    actor_merchant_id: row.actor_merchant_id,
    created_at: iso(row.created_at),
    archived: row.archived_at != null,
    archived_at: iso(row.archived_at ?? null),
  };
}

/** The full row, with the validator's whole answer. */
export function presentAuditFull(row: AuditRow & { archived_at?: Date | null }): PendingFundsAuditFullView {
  return { ...presentAudit(row), validator_response: row.validator_response };
}
