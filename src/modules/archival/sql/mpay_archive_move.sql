-- Archives a batch of audit rows older than 90 days (contract section 8) without a DELETE (DESIGN 2): each row is copied
-- to `<source>_archive` with archived_at and stays in its table, so nothing is removed from the database and a read by
-- id still finds it. A SECURITY DEFINER function owned by the tables' owner: the service role cannot write around it.
create or replace function mpay_archive_move(source text, as_of timestamptz, batch_size integer) returns integer
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
      and not exists (
        select 1 from pg_attribute a
        where a.attrelid = archive::regclass and a.attname = s.attname and a.attnum > 0 and not a.attisdropped);
  if missing is not null then
    raise exception 'mpay_archive_move: % lacks column(s) % of %', archive, missing, source;
  end if;
  select string_agg(quote_ident(attname), ', ' order by attnum) into columns
    from pg_attribute where attrelid = source::regclass and attnum > 0 and not attisdropped;
  -- The oldest rows without a copy, skipping rows another pass holds; the source is only read, never written.
  execute format(
    'insert into %1$I (%2$s, archived_at) select %2$s, $3 from ('
    '  select r.* from %3$I r where r.created_at < $1 and not exists (select 1 from %1$I a where a.id = r.id)'
    '  order by r.created_at, r.id limit $2 for update of r skip locked'
    ') taken on conflict (id) do nothing', archive, columns, source)
    using as_of - interval '90 days', batch_size, as_of;
  get diagnostics moved = row_count;
  return moved;
end
$$;
