import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Leased webhook deliveries are the few being sent right now (a recorded attempt clears the lease): a partial index
 * over them keeps the count of each endpoint's leases (mpay_claim_webhook_deliveries) off the pending backlog.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create index webhook_deliveries_leased on webhook_deliveries (claimed_until, endpoint_id) where status = 'pending' and claimed_until is not null;
  `,
  );
}
