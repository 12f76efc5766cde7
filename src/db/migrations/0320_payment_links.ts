import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Payment links: a shareable page that makes a payment on each use. A link is never deleted (deactivation sets
 * `deactivated_at`); `payments_completed` counts its completed payments (the trigger in
 * `payment-links/sql/mpay_count_link_payment.sql`), which is what its limits count. Each payment made from a link
 * names it in `payments.payment_link_id`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table payment_links (
      id text primary key check (id ~ '^plink_[0-9a-f]{32}$'),
      merchant_id uuid not null references merchants(id),
      is_sandbox boolean not null,
      title text not null,
      description text,
      currency text not null,
      amount_minor bigint check (amount_minor > 0),
      amount_min_minor bigint check (amount_min_minor > 0),
      amount_max_minor bigint,
      reusable boolean not null,
      max_payments integer check (max_payments > 0),
      expires_at timestamptz,
      return_url text,
      metadata jsonb not null default '{}',
      payments_completed integer not null default 0,
      created_at timestamptz not null,
      deactivated_at timestamptz,
      check ((amount_minor is null) <> (amount_min_minor is null)),
      check ((amount_min_minor is null) = (amount_max_minor is null)),
      check (amount_max_minor >= amount_min_minor),
      check (reusable or max_payments is null)
    );
    create index payment_links_list on payment_links (merchant_id, is_sandbox, created_at desc, id desc);
    alter table payments add column payment_link_id text references payment_links(id);
    create index payments_by_link on payments (payment_link_id, created_at desc) where payment_link_id is not null;
  `,
  );
}
