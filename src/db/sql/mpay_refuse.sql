-- Raises: a statement that writes several tables at once calls it when a check fails (an insert that skipped a
-- conflicting row, a reservation an offer no longer covers), so the whole statement rolls back with a reason.
create or replace function mpay_refuse(reason text) returns boolean language plpgsql as $$
begin
  raise exception 'refused: %', reason using errcode = 'raise_exception';
end
$$;
