-- Hands mpay_archive_move the oldest rows created before p_before that have no archive copy yet (at most p_limit,
-- skipping rows another pass holds). Nothing is deleted: the row stays where it is and its copy in the archive marks
-- it archived.
create or replace function mpay_archive_take_admin_audit_log(p_before timestamptz, p_limit integer)
returns setof admin_audit_log language plpgsql as $$
begin
  return query
  select r.* from admin_audit_log r
  where r.created_at < p_before and not exists (select 1 from admin_audit_log_archive a where a.id = r.id)
  order by r.created_at, r.id limit p_limit for update of r skip locked;
end
$$;
