import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Sellers get a credential of their own (DESIGN 3b): a seller key `sel_live_…`, kept only as its SHA-256 (shown once,
 * at creation or when rolled), with a hint to recognise it. The seller decides the legs that wait for it with it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table sellers add column key_hash text;
    alter table sellers add column key_hint text;
    alter table sellers add column key_created_at timestamptz;
    create unique index sellers_key_hash on sellers (key_hash) where key_hash is not null
  `,
  );
}
