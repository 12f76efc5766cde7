import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Drops `webhook_deliveries_event (event_id)`: the unique `webhook_deliveries_event_endpoint (event_id, endpoint_id)`
 * leads with the same column and serves every query by event (an event's deliveries, its delivery status, the
 * dispatcher's join to its event), so the narrower index only cost every delivery row written (one per event) one
 * more index insert.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, `drop index if exists webhook_deliveries_event;`);
}
