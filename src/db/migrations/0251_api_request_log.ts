import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * The recent API calls of each key, for the dashboard's Developers page: written in batches after the responses,
 * kept a few days (the dashboard's purge job deletes older rows).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table api_request_log (
      id uuid primary key,
      merchant_id uuid not null,
      api_key_id uuid not null,
      is_sandbox boolean not null,
      method text not null,
      path text not null,
      status integer not null,
      duration_ms integer not null,
      request_id text not null,
      created_at timestamptz not null
    );
    create index api_request_log_key on api_request_log (api_key_id, created_at desc);
    create index api_request_log_created on api_request_log (created_at);
  `,
  );
}
