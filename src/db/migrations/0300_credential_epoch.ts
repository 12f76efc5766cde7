import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * One counter that every credential change moves (src/modules/merchants/sql/mpay_credentials_changed.sql): the api
 * processes cache verified credentials stamped with the counter they were read under, and trust an entry only while a
 * read of the counter made after the request arrived still shows that value.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table credential_epoch (
      id boolean primary key default true check (id),
      epoch bigint not null
    );
    insert into credential_epoch (id, epoch) values (true, 0);
  `,
  );
}
