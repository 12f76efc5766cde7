-- Makes a table append-only: its guard trigger, and its name in `append_only_tables`, which the least-privilege
-- grants read (src/db/roles.ts). A migration adds a table with `select mpay_append_only('<table>')`.
create or replace function mpay_append_only(target text) returns void language plpgsql as $$
begin
  if to_regclass(target) is null then
    raise exception 'mpay_append_only: no table %', target;
  end if;
  execute format('drop trigger if exists %I on %I', target || '_append_only_guard', target);
  execute format(
    'create trigger %I before update or delete or truncate on %I for each statement execute function mpay_refuse_rewrite()',
    target || '_append_only_guard', target);
  insert into append_only_tables (table_name) values (target) on conflict do nothing;
end
$$;
