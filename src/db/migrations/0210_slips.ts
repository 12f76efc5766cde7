import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Slips known by their bank reference (DESIGN 3a "Slip identity"): one row per slip shown for one owner (a payment
 * leg, a pending fund or a cash leg) with its reference (read from the slip-verification QR, or the provider's),
 * its SHA-256 and the stored verdict. A slip is accepted by at most one owner: the partial unique index on its
 * identity (the reference, else `sha256:<hex>`) is the database's half of the duplicate check.
 *
 * Payment proofs name their leg (`match_order`; one proof per leg), and the audit knows the local `slip_qr` validator.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table slips (
      id uuid primary key,
      owner text not null,
      sha256 text not null,
      reference text,
      sending_bank text,
      identity text not null,
      outcome text check (outcome in ('verified', 'failed', 'unverified', 'timeout')),
      reason text,
      validator_kind text,
      validator_response jsonb,
      unverified_fields jsonb not null default '[]',
      accepted boolean not null default false,
      provider_asks integer not null default 0 check (provider_asks >= 0),
      created_at timestamptz not null,
      updated_at timestamptz not null,
      constraint slips_owner_sha256_unique unique (owner, sha256),
      check (not accepted or outcome = 'verified')
    );
    create unique index slips_accepted_identity on slips (identity) where accepted;
    create index slips_accepted_sha256 on slips (sha256) where accepted;
    create index slips_owner_reference on slips (owner, reference) where reference is not null;
    alter table payment_proofs add column match_order integer not null default 1 check (match_order >= 1);
    create unique index payment_proofs_leg_unique on payment_proofs (payment_id, match_order);
    alter table receiver_confirm_audit drop constraint receiver_confirm_audit_validator_kind_check;
    alter table receiver_confirm_audit add constraint receiver_confirm_audit_validator_kind_check
      check (validator_kind in ('null_validator', 'easyslip', 'slip_qr'));
  `,
  );
}
