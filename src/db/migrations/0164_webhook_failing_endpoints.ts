import { sql, type Kysely } from 'kysely';

/**
 * An endpoint whose last attempt failed is failing from `failing_since` until its next success; the dispatcher's claim
 * gives it fewer slots (src/modules/webhooks/sql/mpay_claim_webhook_deliveries.sql).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhook_endpoints add column failing_since timestamptz`.execute(db);
}
