import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Pending funds and the receiver-confirm audit. The audit is append-only at the database level (the statement-level
 * guard of every append-only table, src/db/sql/mpay_append_only.sql).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table pending_funds (
      id uuid primary key,
      receiver_merchant_id uuid not null references merchants(id),
      is_sandbox boolean not null default false,
      status text not null check (status in ('pending_validation', 'validated_pending_receiver_confirm', 'confirmed', 'failed', 'expired')),
      -- micro-PAY to mint on confirmation (the contract's name)
      amount_minor bigint not null check (amount_minor > 0),
      payer_reference text not null,
      fiat_amount_minor bigint check (fiat_amount_minor > 0),
      fiat_currency text,
      receiver_account jsonb,
      receipt_sha256 text not null,
      content_type text not null,
      validator_kind text,
      -- every receiver-confirm call applied to the row
      attempts integer not null default 0 check (attempts >= 0),
      -- the non-verified, non-timeout ones, which count towards RECEIVER_CONFIRM_MAX_ATTEMPTS
      unverified_attempts integer not null default 0 check (unverified_attempts >= 0),
      failure_reason text,
      ledger_transfer_id uuid,
      expires_at timestamptz not null,
      first_receiver_attempt_at timestamptz,
      receiver_window_expires_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      validated_at timestamptz,
      confirmed_at timestamptz,
      failed_at timestamptz,
      expired_at timestamptz,
      check ((status = 'confirmed') = (ledger_transfer_id is not null))
    );
    create index pending_funds_receiver on pending_funds (receiver_merchant_id, is_sandbox, created_at desc, id desc);
    create index pending_funds_open_ttl on pending_funds (expires_at) where status in ('pending_validation', 'validated_pending_receiver_confirm') and first_receiver_attempt_at is null;
    create index pending_funds_open_window on pending_funds (receiver_window_expires_at) where status = 'validated_pending_receiver_confirm' and first_receiver_attempt_at is not null;

    create table receiver_confirm_audit (
      id uuid primary key,
      pending_funds_id uuid not null references pending_funds(id),
      -- intake: the validation when the row is created; receiver_confirm: a receiver's confirmation call
      stage text not null check (stage in ('intake', 'receiver_confirm')),
      outcome text not null check (outcome in ('verified', 'failed', 'unverified', 'timeout')),
      validator_kind text not null check (validator_kind in ('null_validator', 'easyslip')),
      validator_response jsonb not null,
      failure_reason text,
      observed_amount_minor bigint,
      provider_reference text,
      receipt_sha256 text not null,
      content_type text not null,
      status_before text not null,
      status_after text not null,
      -- false when the row had left validated_pending_receiver_confirm before this call's result could apply
      applied boolean not null,
      actor_merchant_id uuid,
      created_at timestamptz not null
    );
    create index receiver_confirm_audit_list on receiver_confirm_audit (created_at desc, id desc);
    create index receiver_confirm_audit_row on receiver_confirm_audit (pending_funds_id, created_at desc, id desc);
  `,
  );
}
