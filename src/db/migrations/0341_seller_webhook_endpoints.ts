import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Sellers' own webhook endpoints (DESIGN 3b: `leg.awaiting_payee` goes to the seller's webhook endpoint). An endpoint
 * belongs to a merchant or to a seller, never both; a seller's endpoints are live (seller keys are). A delivery to a
 * seller's endpoint names the seller: the event's merchant never lists, redelivers or counts it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table webhook_endpoints alter column merchant_id drop not null;
    alter table webhook_endpoints add column seller_id uuid references sellers(id);
    alter table webhook_endpoints add constraint webhook_endpoints_one_owner
      check ((merchant_id is null) <> (seller_id is null) and (seller_id is null or not is_sandbox));
    create index webhook_endpoints_seller on webhook_endpoints (seller_id) where seller_id is not null and deleted_at is null;
    alter table webhook_deliveries add column seller_id uuid references sellers(id);
  `,
  );
}
