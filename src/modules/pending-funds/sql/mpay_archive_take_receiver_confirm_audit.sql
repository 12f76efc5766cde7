-- Hands mpay_archive_move the oldest rows created before p_before that have no archive copy yet (at most p_limit,
-- skipping rows another pass holds). Nothing is deleted: the row stays where it is and its copy in the archive marks
-- it archived.
create or replace function mpay_archive_take_receiver_confirm_audit(p_before timestamptz, p_limit integer)
returns setof receiver_confirm_audit language plpgsql as $$
begin
  return query
  select r.* from receiver_confirm_audit r
  where r.created_at < p_before and not exists (select 1 from receiver_confirm_audit_archive a where a.id = r.id)
  order by r.created_at, r.id limit p_limit for update of r skip locked;
end
$$;
