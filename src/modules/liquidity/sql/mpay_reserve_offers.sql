-- Reserves what each seller's offer holds for a payment, one conditional update per seller with the offers locked in
-- FIFO order (rate, created_at, id: two callers never deadlock), each only if it still covers the amount. Answers how
-- many it reserved: fewer than asked means the caller must roll back.
create or replace function mpay_reserve_offers(p_seller_ids uuid[], p_held_minor bigint[]) returns bigint language plpgsql as $$
declare
  reserved_count bigint;
begin
  with wanted as (
    select w.id, w.held_minor from unnest(p_seller_ids, p_held_minor) as w (id, held_minor)
  ),
  locked as (
    select s.id, s.liquidity_minor - s.reserved_minor as available_minor
    from sellers s join wanted w on w.id = s.id
    where s.active and not s.synthetic
    order by s.rate, s.created_at, s.id
    -- not FOR UPDATE: the creating transaction's own leg rows hold KEY SHARE locks on these sellers (their foreign
    -- key), which FOR UPDATE would wait on across transactions and deadlock
    for no key update of s
  ),
  reserved as (
    update sellers s set reserved_minor = s.reserved_minor + w.held_minor
    from wanted w join locked l on l.id = w.id
    where s.id = w.id and l.available_minor >= w.held_minor
    returning 1
  )
  select count(*) into reserved_count from reserved;
  return reserved_count;
end
$$;
