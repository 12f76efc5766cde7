-- Hands mpay_archive_move the oldest rows created before p_before (at most p_limit, skipping rows another pass holds)
-- and deletes them: the one DELETE the append-only triggers allow, while mpay.archive_move names the table.
create or replace function mpay_archive_take_admin_audit_log(p_before timestamptz, p_limit integer)
returns setof admin_audit_log language plpgsql as $$
begin
  perform set_config('mpay.archive_move', 'admin_audit_log', true);
  return query
  with picked as (
    select r.id from admin_audit_log r where r.created_at < p_before order by r.created_at, r.id limit p_limit for update skip locked
  ),
  taken as (delete from admin_audit_log t using picked where t.id = picked.id returning t.*)
  select * from taken;
  perform set_config('mpay.archive_move', '', true);
end
$$;
