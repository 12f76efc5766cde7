-- The dispatcher's claim (webhooks/dispatcher.ts). An endpoint's free slots (its cap less its live leases) are
-- counted here, so an endpoint at its cap is left out before the batch is cut, however long its backlog. A failing
-- endpoint (its last attempt failed: `failing_since`) gets `p_failing_per_endpoint` slots, and a pass takes at most
-- `p_failing_batch` deliveries of failing endpoints, so the rest stay for endpoints that answer. Only the oldest
-- pending event of an ordering key per endpoint is claimable; rows are locked `for update skip locked` and checked
-- again, so several workers share the queue. A function, so PL/pgSQL keeps the plan per connection.
create or replace function mpay_claim_webhook_deliveries(p_now timestamptz, p_until timestamptz, p_token uuid, p_per_endpoint integer, p_batch integer,
                                              p_failing_per_endpoint integer, p_failing_batch integer)
returns table (delivery_id uuid, event_id text, is_sandbox boolean, ordering_key text, payload jsonb, endpoint_id uuid, url text,
               secret_sealed text, previous_secret_sealed text, previous_secret_expires_at timestamptz, failing boolean)
language plpgsql as $$
#variable_conflict use_column
begin
  return query
  with leased as (
    select l.endpoint_id, count(*) as n from webhook_deliveries l
    where l.status = 'pending' and l.claimed_until is not null and l.claimed_until > p_now
    group by l.endpoint_id
  ),
  capped as (
    select w.id, w.failing_since is not null as failing,
           case when w.failing_since is null then p_per_endpoint else p_failing_per_endpoint end as cap
    from webhook_endpoints w
    -- a disabled endpoint's deliveries wait (they go out if it is enabled again); a deleted one's were skipped
    where not w.disabled and w.deleted_at is null
  ),
  heads as (
    select d.id, d.event_seq, c.failing, c.cap,
           coalesce(l.n, 0) + row_number() over (partition by d.endpoint_id order by d.event_seq) as slot
    from webhook_deliveries d
    join capped c on c.id = d.endpoint_id
    left join leased l on l.endpoint_id = d.endpoint_id
    where d.status = 'pending'
      and d.next_attempt_at <= p_now
      and (d.claimed_until is null or d.claimed_until < p_now)
      and coalesce(l.n, 0) < c.cap
      and not exists (
        select 1 from webhook_deliveries earlier
        where earlier.status = 'pending' and earlier.endpoint_id = d.endpoint_id and earlier.ordering_key = d.ordering_key
          and earlier.event_seq < d.event_seq
      )
  ),
  ranked as (
    select h.id, h.event_seq, h.failing, row_number() over (partition by h.failing order by h.event_seq) as nth
    from heads h
    where h.slot <= h.cap
  ),
  picked as (
    select d.id from webhook_deliveries d
    where d.id in (select r.id from ranked r where not r.failing or r.nth <= p_failing_batch order by r.event_seq limit p_batch)
      and d.status = 'pending' and (d.claimed_until is null or d.claimed_until < p_now)
    for update skip locked
  ),
  claimed as (
    update webhook_deliveries d set claim_token = p_token, claimed_until = p_until
    from picked where d.id = picked.id
    returning d.id, d.event_id, d.event_seq, d.is_sandbox, d.ordering_key, d.endpoint_id
  )
  select c.id, c.event_id, c.is_sandbox, c.ordering_key, e.payload, w.id, w.url, w.secret_sealed, w.previous_secret_sealed, w.previous_secret_expires_at,
         w.failing_since is not null
  from claimed c
  join events e on e.id = c.event_id
  join webhook_endpoints w on w.id = c.endpoint_id
  order by c.event_seq;
end
$$;
