import type { UsersDeps } from './users.ts';

/** The merchant's dashboard settings (one row per merchant, written by its owners). */
export async function setTimeZone(deps: UsersDeps, merchant_id: string, time_zone: string): Promise<void> {
  const now = deps.clock.now();
  await deps.db
    .insertInto('dashboard_settings')
    .values({ merchant_id, time_zone, updated_at: now })
    .onConflict((oc) => oc.column('merchant_id').doUpdateSet({ time_zone, updated_at: now }))
    .execute();
}
