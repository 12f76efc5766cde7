import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Drops the foreign keys of `webhook_deliveries` to `events` and `merchants`. A delivery is derived from its event:
 * every writer copies `event_id` and `merchant_id` from an event it has just inserted (the fan-out trigger, the test
 * event) or from an existing delivery (the requeue), and events can be neither updated nor deleted (their append-only
 * guard), so neither key can ever point at nothing and the events' own key to `merchants` already holds the merchant.
 * The two checks were a quarter of the foreign-key work of every event written (a payment create's among them:
 * 8-13 % of its PostgreSQL CPU). The delivery's endpoint and seller keys stay: those rows do change.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table webhook_deliveries drop constraint if exists webhook_deliveries_event_id_fkey;
    alter table webhook_deliveries drop constraint if exists webhook_deliveries_merchant_id_fkey;
    `,
  );
}
