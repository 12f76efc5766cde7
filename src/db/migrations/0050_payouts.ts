import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * The merchant's outbound side: sell orders (PAY out for a fiat payout the merchant makes itself), their cash-leg
 * attempts, buy orders (the counterparty, matched FIFO), and disputes with their event log. Statuses are checked
 * here too, so a bug in the service can never write a status the state machine does not know.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table sell_orders (
      id uuid primary key,
      merchant_id uuid not null references merchants(id),
      is_sandbox boolean not null,
      status text not null check (status in ('pending', 'matched', 'cash_leg_in_flight', 'completed', 'failed')),
      amount_micro_pay bigint not null check (amount_micro_pay > 0),
      currency text not null check (currency = 'PAY'),
      target_currency text not null,
      target_fiat_amount bigint not null check (target_fiat_amount > 0),
      expires_at timestamptz not null,
      matched_buy_order_id uuid,
      mint_source_account text,
      cash_leg_attempts integer not null default 0,
      last_cash_leg_attempt_at timestamptz,
      last_cash_leg_outcome text,
      failure_reason text,
      created_at timestamptz not null,
      matched_at timestamptz,
      cash_leg_requested_at timestamptz,
      completed_at timestamptz,
      failed_at timestamptz
    );
    create index sell_orders_merchant on sell_orders (merchant_id, is_sandbox, created_at desc, id desc);
    create index sell_orders_pending_fifo on sell_orders (is_sandbox, created_at, id) where status = 'pending';
    create index sell_orders_open on sell_orders (status, expires_at) where status in ('pending', 'matched', 'cash_leg_in_flight');

    create table sell_order_cash_leg_attempts (
      id uuid primary key,
      sell_order_id uuid not null references sell_orders(id),
      attempt_number integer not null,
      outcome text not null check (outcome in ('verified', 'failed', 'unverified', 'timeout')),
      reason text,
      reference text,
      content_type text not null,
      receipt_sha256 text not null,
      validator_kind text not null,
      validator_response jsonb not null,
      created_at timestamptz not null,
      unique (sell_order_id, attempt_number)
    );

    create table buy_orders (
      id uuid primary key,
      merchant_id uuid not null references merchants(id),
      is_sandbox boolean not null,
      status text not null check (status in ('pending', 'matched', 'cancelled', 'expired')),
      amount_micro_pay bigint not null check (amount_micro_pay > 0),
      fiat_currency text not null,
      fiat_amount bigint not null check (fiat_amount > 0),
      expires_at timestamptz not null,
      matched_sell_order_id uuid references sell_orders(id),
      mint_transfer_id uuid,
      created_at timestamptz not null,
      matched_at timestamptz,
      cancelled_at timestamptz,
      expired_at timestamptz
    );
    create index buy_orders_merchant on buy_orders (merchant_id, is_sandbox, created_at desc, id desc);
    create index buy_orders_pending_fifo on buy_orders (is_sandbox, fiat_currency, amount_micro_pay, created_at, id) where status = 'pending';
    create unique index buy_orders_one_per_sell on buy_orders (matched_sell_order_id) where matched_sell_order_id is not null;

    create table disputes (
      id uuid primary key,
      merchant_id uuid not null references merchants(id),
      is_sandbox boolean not null,
      sell_order_id uuid not null references sell_orders(id),
      kind text not null check (kind in ('cash_leg_failure', 'merchant_dispute', 'chargeback')),
      status text not null check (status in ('opened', 'investigating', 'resolved', 'escalated')),
      notes text not null,
      opened_by_user_id text not null,
      outcome text check (outcome in ('favor_merchant', 'favor_counterparty', 'no_action')),
      ledger_effect text check (ledger_effect in ('mint', 'burn', 'none')),
      ledger_amount_micro_pay bigint,
      ledger_transfer_id uuid,
      created_at timestamptz not null,
      investigating_at timestamptz,
      escalated_at timestamptz,
      resolved_at timestamptz
    );
    create index disputes_merchant on disputes (merchant_id, is_sandbox, created_at desc, id desc);
    create index disputes_all on disputes (created_at desc, id desc);
    create unique index disputes_one_active_per_sell_order on disputes (sell_order_id) where status <> 'resolved';

    create table dispute_events (
      id uuid primary key,
      dispute_id uuid not null references disputes(id),
      seq integer not null,
      action text not null check (action in ('opened', 'investigating', 'escalated', 'resolved')),
      from_status text,
      to_status text not null,
      actor_user_id text not null,
      actor_role text not null,
      notes text,
      details jsonb not null,
      created_at timestamptz not null,
      unique (dispute_id, seq)
    );
  `,
  );
}
