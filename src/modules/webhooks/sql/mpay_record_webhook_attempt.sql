-- Records an attempt and, after a success, leases the next event of the same line at the same endpoint, in one call.
-- The outcome applies only while the caller still holds the lease (`claim_token`); otherwise only the attempt is kept.
-- A failure waits `p_delays_ms[retries]` (the schedule is RETRY_DELAYS_MS in TypeScript) or, past its end, fails the
-- delivery. The endpoint's `failing_since` is set by a failure and cleared by a success.
create or replace function mpay_record_webhook_attempt(
  p_delivery_id uuid, p_token uuid, p_attempt_id uuid, p_url text, p_status_code integer, p_error text, p_duration_ms integer,
  p_response_excerpt text, p_succeeded boolean, p_started_at timestamptz, p_now timestamptz, p_delays_ms integer[], p_until timestamptz)
returns table (delivery_id uuid, event_id text, is_sandbox boolean, ordering_key text, payload jsonb, endpoint_id uuid, url text,
               secret_sealed text, previous_secret_sealed text, previous_secret_expires_at timestamptz)
language plpgsql as $$
#variable_conflict use_column
declare
  v_attempts integer;
  v_retries integer;
  v_token uuid;
  v_endpoint uuid;
  v_line text;
  v_delay integer;
begin
  update webhook_deliveries d
    set attempt_count = d.attempt_count + 1, last_attempt_at = p_started_at, last_status_code = p_status_code, last_error = p_error
    where d.id = p_delivery_id
    returning d.attempt_count, d.retry_count, d.claim_token, d.endpoint_id, d.ordering_key into v_attempts, v_retries, v_token, v_endpoint, v_line;
  if not found then
    raise exception 'mpay_record_webhook_attempt: no delivery %', p_delivery_id;
  end if;
  insert into webhook_attempts (id, delivery_id, attempt_number, url, status_code, error, duration_ms, response_excerpt, succeeded, started_at)
    values (p_attempt_id, p_delivery_id, v_attempts, p_url, p_status_code, p_error, p_duration_ms, p_response_excerpt, p_succeeded, p_started_at);
  -- the endpoint's state, whoever holds the lease now: written only when it changes
  if p_succeeded then
    update webhook_endpoints w set failing_since = null where w.id = v_endpoint and w.failing_since is not null;
  else
    update webhook_endpoints w set failing_since = p_now where w.id = v_endpoint and w.failing_since is null;
  end if;
  if v_token is distinct from p_token then
    return;
  end if;
  if not p_succeeded then
    v_delay := p_delays_ms[v_retries + 1];
    if v_delay is null then
      update webhook_deliveries d set status = 'failed', retry_count = v_retries + 1, claim_token = null, claimed_until = null where d.id = p_delivery_id;
    else
      update webhook_deliveries d set retry_count = v_retries + 1, next_attempt_at = p_now + v_delay * interval '1 millisecond', claim_token = null, claimed_until = null
        where d.id = p_delivery_id;
    end if;
    return;
  end if;
  update webhook_deliveries d set status = 'succeeded', delivered_at = p_now, retry_count = 0, claim_token = null, claimed_until = null where d.id = p_delivery_id;
  if p_until is null then
    return;
  end if;
  return query
  with next as (
    select n.id from webhook_deliveries n
    where n.status = 'pending' and n.endpoint_id = v_endpoint and n.ordering_key = v_line
    order by n.event_seq limit 1
  ),
  claimed as (
    update webhook_deliveries d set claim_token = p_token, claimed_until = p_until
    from next, webhook_endpoints w
    where d.id = next.id and w.id = d.endpoint_id and not w.disabled and w.deleted_at is null
      and d.status = 'pending' and d.next_attempt_at <= p_now and (d.claimed_until is null or d.claimed_until < p_now)
    returning d.id, d.event_id, d.is_sandbox, d.ordering_key, d.endpoint_id
  )
  select c.id, c.event_id, c.is_sandbox, c.ordering_key, e.payload, w.id, w.url, w.secret_sealed, w.previous_secret_sealed, w.previous_secret_expires_at
  from claimed c
  join events e on e.id = c.event_id
  join webhook_endpoints w on w.id = c.endpoint_id;
end
$$;
