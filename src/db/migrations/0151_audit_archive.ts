import { sql, type Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Contract section 8 (DESIGN "Storage"): audit rows older than 90 days go to cold archive tables that stay
 * append-only and readable. The audit tables refuse DELETE by trigger (and the service role has no DELETE on them),
 * so the move is one privileged path: `mpay_archive_move`, a SECURITY DEFINER function owned by the tables' owner,
 * which copies and deletes in one statement (so in one transaction) under a transaction-local setting naming the
 * table being archived; the append-only triggers allow a DELETE on exactly that table while the setting names it,
 * and refuse everything else as before (UPDATE and TRUNCATE always). The archive tables join `mpay_append_only`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table receiver_confirm_audit_archive (like receiver_confirm_audit including defaults);
    alter table receiver_confirm_audit_archive add column archived_at timestamptz not null;
    alter table receiver_confirm_audit_archive add primary key (id);
    create index receiver_confirm_audit_archive_list on receiver_confirm_audit_archive (created_at desc, id desc);
    create index receiver_confirm_audit_archive_row on receiver_confirm_audit_archive (pending_funds_id, created_at desc, id desc);

    create table admin_audit_log_archive (like admin_audit_log including defaults);
    alter table admin_audit_log_archive add column archived_at timestamptz not null;
    alter table admin_audit_log_archive add primary key (id);
    create index admin_audit_log_archive_target on admin_audit_log_archive (target_type, target_id, created_at);
    -- The oldest-first scan of the move (receiver_confirm_audit_list already serves receiver_confirm_audit backwards).
    create index admin_audit_log_created on admin_audit_log (created_at, id);
  `,
  );
  // Function bodies hold semicolons, so each is sent as one statement of its own.
  await sql.raw(`
    create or replace function mpay_refuse_rewrite() returns trigger language plpgsql as $$
    begin
      -- The one exception: mpay_archive_move deleting the rows it has just copied to the table's archive.
      if tg_op = 'DELETE' and current_setting('mpay.archive_move', true) = tg_table_name then
        return null;
      end if;
      raise exception '% is append-only: % refused', tg_table_name, tg_op using errcode = 'raise_exception';
    end
    $$`).execute(db);
  await sql.raw(`
    create or replace function receiver_confirm_audit_append_only() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' and current_setting('mpay.archive_move', true) = tg_table_name then
        return old;
      end if;
      raise exception 'receiver_confirm_audit is append-only: % refused', tg_op;
    end
    $$`).execute(db);
  await sql.raw(`
    create function mpay_archive_move(source text, as_of timestamptz, batch_size integer) returns integer
    language plpgsql security definer set search_path from current as $$
    declare
      archive text := source || '_archive';
      columns text;
      missing text;
      moved integer;
    begin
      if source not in ('receiver_confirm_audit', 'admin_audit_log') then
        raise exception 'mpay_archive_move: % is not archived', source;
      end if;
      if batch_size < 1 or batch_size > 10000 then
        raise exception 'mpay_archive_move: batch_size % outside 1..10000', batch_size;
      end if;
      -- A column added to the source but not to its archive would be lost: refuse instead.
      select string_agg(s.attname, ', ') into missing
        from pg_attribute s
        where s.attrelid = source::regclass and s.attnum > 0 and not s.attisdropped
          and not exists (select 1 from pg_attribute a where a.attrelid = archive::regclass and a.attname = s.attname and a.attnum > 0 and not a.attisdropped);
      if missing is not null then
        raise exception 'mpay_archive_move: % lacks column(s) % of %', archive, missing, source;
      end if;
      select string_agg(quote_ident(attname), ', ' order by attnum) into columns
        from pg_attribute where attrelid = source::regclass and attnum > 0 and not attisdropped;
      perform set_config('mpay.archive_move', source, true);
      execute format(
        'with picked as (select id from %1$I where created_at < $1 order by created_at, id limit $2 for update skip locked),
              moved as (delete from %1$I t using picked where t.id = picked.id returning t.*)
         insert into %2$I (%3$s, archived_at) select %3$s, $3 from moved',
        source, archive, columns)
        using as_of - interval '90 days', batch_size, as_of;
      get diagnostics moved = row_count;
      perform set_config('mpay.archive_move', '', true);
      return moved;
    end
    $$`).execute(db);
  await sql`select mpay_append_only('receiver_confirm_audit_archive')`.execute(db);
  await sql`select mpay_append_only('admin_audit_log_archive')`.execute(db);
}
