import type { Generated, Selectable } from 'kysely';
import type { Json } from '../../db/schema.ts';
import type { ValidatorKind, ValidatorOutcome } from '../validators/port.ts';

export type PendingFundsStatus =
  | 'pending_validation'
  | 'validated_pending_receiver_confirm'
  | 'confirmed'
  | 'failed'
  | 'expired';

export interface ReceiverAccount {
  account_number?: string;
  account_name?: string;
  promptpay_id?: string;
}

export interface PendingFundsTables {
  pending_funds: {
    id: string;
    receiver_merchant_id: string;
    is_sandbox: boolean;
    status: PendingFundsStatus;
    amount_minor: number;
    payer_reference: string;
    fiat_amount_minor: number | null;
    fiat_currency: string | null;
    receiver_account: Json<ReceiverAccount> | null;
    receipt_sha256: string;
    content_type: string;
    validator_kind: string | null;
    attempts: number;
    unverified_attempts: number;
    failure_reason: string | null;
    ledger_transfer_id: string | null;
    expires_at: Date;
    first_receiver_attempt_at: Date | null;
    receiver_window_expires_at: Date | null;
    created_at: Date;
    updated_at: Date;
    validated_at: Date | null;
    confirmed_at: Date | null;
    failed_at: Date | null;
    expired_at: Date | null;
    /** Validator calls at intake: the first one, then the background revalidations (migration 0150). */
    intake_attempts: Generated<number>;
    /** When the next background revalidation is due; null when none is (validated, terminal, or out of attempts). */
    intake_next_attempt_at: Generated<Date | null>;
    intake_claimed_until: Generated<Date | null>;
  };
  /** The receipt bytes kept at intake, so the validator can be asked again (migration 0150). */
  pending_funds_receipts: {
    pending_funds_id: string;
    data: Uint8Array;
    content_type: string;
    sha256: string;
    created_at: Date;
  };
  receiver_confirm_audit: {
    id: string;
    pending_funds_id: string;
    stage: 'intake' | 'receiver_confirm';
    outcome: ValidatorOutcome;
    validator_kind: ValidatorKind;
    validator_response: Json<Record<string, unknown>>;
    failure_reason: string | null;
    observed_amount_minor: number | null;
    provider_reference: string | null;
    receipt_sha256: string;
    content_type: string;
    status_before: string;
    status_after: string;
    applied: boolean;
    actor_merchant_id: string | null;
    created_at: Date;
  };
}

export type PendingFundsRow = Selectable<PendingFundsTables['pending_funds']>;
export type AuditRow = Selectable<PendingFundsTables['receiver_confirm_audit']>;
