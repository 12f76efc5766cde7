import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Refunds (DESIGN 3c): money going back to the buyer of a completed or partly paid payment. A refund waits for the
 * buyer's destination (`requires_action`, behind an unguessable claim token), then for the money (`pending`), and
 * ends `succeeded`, `failed` or `canceled`. Each slip the merchant shows for it is kept in `refund_proofs`. The payment
 * counts its succeeded refunds in `amount_refunded_minor` (written by the payments module only).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table refunds (
      id uuid primary key,
      merchant_id uuid not null references merchants(id),
      is_sandbox boolean not null,
      payment_id text not null references payments(id),
      amount_minor bigint not null check (amount_minor > 0),
      currency text not null,
      status text not null check (status in ('requires_action', 'pending', 'succeeded', 'failed', 'canceled')),
      reason text check (reason in ('duplicate', 'fraudulent', 'requested_by_customer', 'partial_delivery')),
      funding text not null check (funding in ('merchant_transfer', 'pay_balance')),
      destination jsonb,
      claim_token text not null unique,
      claim_expires_at timestamptz not null,
      failure_reason text,
      metadata jsonb not null default '{}',
      hold_micro_pay bigint check (hold_micro_pay > 0),
      sell_order_id uuid,
      awaiting_buyer_since timestamptz,
      created_at timestamptz not null,
      destination_at timestamptz,
      succeeded_at timestamptz,
      failed_at timestamptz,
      canceled_at timestamptz,
      check ((funding = 'pay_balance') = (hold_micro_pay is not null))
    );
    create index refunds_merchant_created on refunds (merchant_id, is_sandbox, created_at desc, id desc);
    create index refunds_payment on refunds (payment_id);
    create index refunds_open on refunds (status) where status in ('requires_action', 'pending');

    create table refund_proofs (
      id uuid primary key,
      seq bigint generated always as identity,
      refund_id uuid not null references refunds(id),
      sha256 text not null,
      content_type text not null,
      size_bytes integer not null,
      data bytea not null,
      outcome text not null check (outcome in ('verified', 'failed', 'unverified', 'timeout')),
      reason text,
      reference text,
      validator_kind text not null,
      validator_response jsonb not null default '{}',
      checked_by_provider boolean not null,
      created_at timestamptz not null
    );
    create index refund_proofs_refund on refund_proofs (refund_id, seq);

    alter table payments add column amount_refunded_minor bigint not null default 0 check (amount_refunded_minor >= 0);
  `,
  );
}
