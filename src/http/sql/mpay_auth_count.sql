-- Moves sign-in counters in fixed windows of p_window_ms (a window opens at the first change after the last one
-- ended), at p_now_ms (the application's clock, ms since the epoch): each key's count gets p_adds[i] added, or is set
-- to p_sets[i] when that is not null, never below 0. Answers each key's count after the change and its window's start.
create or replace function mpay_auth_count(p_keys text[], p_adds double precision[], p_sets double precision[], p_window_ms bigint, p_now_ms bigint)
returns table (key text, count double precision, started_ms bigint) language plpgsql as $$
declare
  v_now timestamptz := to_timestamp(p_now_ms / 1000.0);
begin
  return query
  insert into auth_counters as c (key, value, at)
  select u.k, greatest(0, coalesce(u.s, u.a)), v_now from unnest(p_keys, p_adds, p_sets) as u(k, a, s)
  on conflict on constraint auth_counters_pkey do update
    set value = case when c.at <= v_now - p_window_ms * interval '1 millisecond' then excluded.value
                     else greatest(0, coalesce(
                       (select u.s from unnest(p_keys, p_sets) as u(k, s) where u.k = c.key),
                       c.value + (select u.a from unnest(p_keys, p_adds) as u(k, a) where u.k = c.key))) end,
        at = case when c.at <= v_now - p_window_ms * interval '1 millisecond' then v_now else c.at end
  returning c.key, c.value, round(extract(epoch from c.at) * 1000)::bigint;
end
$$;
