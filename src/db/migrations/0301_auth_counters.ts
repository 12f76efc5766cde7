import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Failed-authentication buckets and sign-in windows shared by every api process when the rate limits have no Redis
 * (src/http/auth-counters.ts, src/http/sql/mpay_auth_take.sql, src/http/sql/mpay_auth_count.sql): a bucket's tokens
 * or a window's count in `value`, the bucket's last refill or the window's start in `at`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table auth_counters (
      key text primary key,
      value double precision not null,
      at timestamptz not null
    );
  `,
  );
}
