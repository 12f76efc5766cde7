import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Webhook endpoints become a resource per merchant and mode: several endpoints per mode, each with its own
 * secret and event filter, and one delivery row per event x subscribed endpoint (the delivery trigger fans out).
 *
 * The merchant's single URL moves to a live default endpoint, and its pending live deliveries move with it (none is
 * lost). The old single URL also received sandbox events; a sandbox event must never reach a live endpoint now, so
 * pending sandbox deliveries become `skipped` (`POST /v1/webhook-deliveries/recover` re-queues them once a sandbox
 * endpoint exists). Secrets are copied as they are (plaintext `whsec_…`); the first start after this migration seals
 * them (AES-256-GCM, see src/modules/webhooks/secret-box.ts) before serving, and clears the merchants' copies.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table webhook_endpoints (
      id uuid primary key,
      merchant_id uuid not null references merchants(id),
      is_sandbox boolean not null,
      url text not null,
      description text,
      -- event types, or ["*"] for every type
      enabled_events jsonb not null,
      disabled boolean not null default false,
      -- the endpoint PUT /v1/webhook-endpoint sets (one per merchant and mode)
      is_default boolean not null default false,
      -- AES-256-GCM sealed secret (v1.<iv>.<tag>.<ciphertext>); plaintext only between this migration and the next start
      secret_sealed text not null,
      -- after a rotation the previous secret still signs until previous_secret_expires_at (overlap)
      previous_secret_sealed text,
      previous_secret_expires_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz
    );
    create index webhook_endpoints_merchant on webhook_endpoints (merchant_id, is_sandbox, created_at, id) where deleted_at is null;
    create unique index webhook_endpoints_one_default on webhook_endpoints (merchant_id, is_sandbox) where is_default and deleted_at is null;

    alter table webhook_deliveries add column endpoint_id uuid references webhook_endpoints(id);
    alter table webhook_deliveries drop constraint webhook_deliveries_event_id_key;
    create unique index webhook_deliveries_event_endpoint on webhook_deliveries (event_id, endpoint_id);
    create index webhook_deliveries_event on webhook_deliveries (event_id);
    drop index webhook_deliveries_ordering_pending;
    create index webhook_deliveries_ordering_pending on webhook_deliveries (endpoint_id, ordering_key, event_seq) where status = 'pending';

    insert into webhook_endpoints (id, merchant_id, is_sandbox, url, description, enabled_events, disabled, is_default, secret_sealed, created_at, updated_at)
      select gen_random_uuid(), id, false, webhook_url, null, '["*"]'::jsonb, false, true, webhook_secret, created_at, created_at
      from merchants where webhook_url is not null and webhook_secret is not null;
    update webhook_deliveries d set endpoint_id = e.id
      from webhook_endpoints e
      where e.merchant_id = d.merchant_id and e.is_default and not e.is_sandbox and not d.is_sandbox;
    update webhook_deliveries set status = 'skipped', claim_token = null, claimed_until = null, last_error = 'no webhook endpoint subscribed'
      where endpoint_id is null and status = 'pending';
    update merchants set webhook_url = null, webhook_secret = null where webhook_url is not null;
  `,
  );
}
