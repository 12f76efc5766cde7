-- Takes a token from a failed-authentication bucket (capacity and refill p_rate per second, the server's clock, so the
-- api processes need not agree on the time): allowed when the bucket held a token, and the tokens left.
create or replace function mpay_auth_take(p_key text, p_rate double precision)
returns table (allowed boolean, tokens double precision) language plpgsql as $$
declare
  v_now timestamptz := clock_timestamp();
  v_tokens double precision;
begin
  insert into auth_counters as c (key, value, at) values (p_key, p_rate, v_now)
  on conflict (key) do update
    set value = least(p_rate, c.value + greatest(0, extract(epoch from (v_now - c.at))) * p_rate), at = v_now
  returning c.value into v_tokens;
  if v_tokens >= 1 then
    update auth_counters set value = value - 1 where key = p_key;
    return query select true, v_tokens - 1;
  else
    return query select false, v_tokens;
  end if;
end
$$;
