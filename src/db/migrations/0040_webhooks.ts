import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Webhook delivery bookkeeping beside the events outbox. Delivery rows are created by a trigger on events in the
 * same transaction as the event (src/modules/webhooks/sql/mpay_enqueue_webhook_delivery.sql). Every HTTP attempt is its own append-only row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table webhook_deliveries (
      id uuid primary key,
      event_id text not null unique references events(id),
      event_seq bigint not null,
      merchant_id uuid not null references merchants(id),
      is_sandbox boolean not null,
      resource_id text not null,
      -- deliveries with the same key go out one at a time in event order; the resource id unless a module says otherwise
      ordering_key text not null,
      -- pending: waiting or being sent; succeeded; failed: the retry schedule ran out; skipped: no endpoint was set
      status text not null check (status in ('pending', 'succeeded', 'failed', 'skipped')),
      attempt_count integer not null default 0,
      -- failures since the last success or manual redelivery: the index into the retry schedule
      retry_count integer not null default 0,
      next_attempt_at timestamptz not null,
      claim_token uuid,
      claimed_until timestamptz,
      last_attempt_at timestamptz,
      last_status_code integer,
      last_error text,
      delivered_at timestamptz,
      created_at timestamptz not null
    );
    create index webhook_deliveries_due on webhook_deliveries (next_attempt_at, event_seq) where status = 'pending';
    create index webhook_deliveries_ordering_pending on webhook_deliveries (merchant_id, ordering_key, event_seq) where status = 'pending';
    create index webhook_deliveries_merchant on webhook_deliveries (merchant_id, is_sandbox, created_at desc, id desc);

    create table webhook_attempts (
      id uuid primary key,
      delivery_id uuid not null references webhook_deliveries(id),
      attempt_number integer not null,
      url text not null,
      status_code integer,
      error text,
      duration_ms integer not null,
      response_excerpt text,
      succeeded boolean not null,
      started_at timestamptz not null
    );
    create index webhook_attempts_delivery on webhook_attempts (delivery_id, attempt_number);

  `,
  );
}
