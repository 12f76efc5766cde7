-- Hands mpay_archive_move the oldest rows created before p_before (at most p_limit, skipping rows another pass holds)
-- and deletes them: the one DELETE the append-only triggers allow, while mpay.archive_move names the table.
create or replace function mpay_archive_take_receiver_confirm_audit(p_before timestamptz, p_limit integer)
returns setof receiver_confirm_audit language plpgsql as $$
begin
  perform set_config('mpay.archive_move', 'receiver_confirm_audit', true);
  return query
  with picked as (
    select r.id from receiver_confirm_audit r where r.created_at < p_before order by r.created_at, r.id limit p_limit for update skip locked
  ),
  taken as (delete from receiver_confirm_audit t using picked where t.id = picked.id returning t.*)
  select * from taken;
  perform set_config('mpay.archive_move', '', true);
end
$$;
