import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Evidence of a live payment leg (DESIGN 3b). A leg's slip may wait for its payee (`awaiting_payee`): a local check
 * (`slip_qr`) or no check (`null_validator`) is not evidence for live money, so the seller (or an operator for it)
 * confirms or rejects; `decided_by` records who did. A payment whose verified legs must complete while another leg
 * was rejected or never proven ends `partially_paid`, and every payment records `amount_received_minor` (the whole
 * amount once completed, the verified legs' amount when partly paid, 0 before). Existing completed and settled
 * payments received their whole amount.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table payments drop constraint payments_status_check;
    alter table payments add constraint payments_status_check check (status in ('created', 'matching', 'matched',
      'payment_pending', 'confirming', 'completed', 'partially_paid', 'failed', 'expired', 'cancelled', 'settled'));
    alter table payments add column partially_paid_at timestamptz;
    alter table payments add column amount_received_minor bigint not null default 0 check (amount_received_minor >= 0);
    update payments set amount_received_minor = amount_minor where status in ('completed', 'settled');
    alter table payment_proofs drop constraint payment_proofs_verdict_check;
    alter table payment_proofs add constraint payment_proofs_verdict_check
      check (verdict in ('verified', 'failed', 'unverified', 'timeout', 'awaiting_payee'));
    alter table payment_proofs add column decided_by text check (decided_by in ('seller', 'operator'));
    alter table payment_proofs add column decided_at timestamptz;
    alter table payment_proofs add column decision_reason text;
    alter table payment_proofs add column awaiting_payee_at timestamptz;
    create index payment_proofs_awaiting_payee on payment_proofs (awaiting_payee_at) where verdict = 'awaiting_payee'
  `,
  );
}
