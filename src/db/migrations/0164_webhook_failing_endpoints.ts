import { sql, type Kysely } from 'kysely';

/**
 * Issue 11 ("the webhook dispatcher must not let one slow or dead merchant endpoint delay other merchants'
 * deliveries"), for many of them at once: the per-endpoint cap kept one dead endpoint to its 4 slots, but 16 dead
 * endpoints of busy merchants filled a worker's 64 (each new payment's first attempt hangs until the timeout), and
 * every other merchant waited behind them.
 *
 * An endpoint whose last attempt failed is *failing* (`webhook_endpoints.failing_since`, set by its first failed
 * attempt, cleared by its next success, written only when the state changes). A failing endpoint gets at most
 * `p_failing_per_endpoint` deliveries in flight (the dispatcher passes 1) instead of `p_per_endpoint`, and a pass takes
 * at most `p_failing_batch` deliveries of failing endpoints (the worker passes what is free of its share for them, a
 * quarter of its slots), so the rest of a worker's slots stay for endpoints that answer. A failing endpoint still
 * gets its attempts, one at a time, and its first success gives it its full cap again.
 *
 * `mpay_claim_webhook_deliveries` gains the two parameters and says of each row whether its endpoint is failing;
 * `mpay_record_webhook_attempt` (same signature) keeps `failing_since`. Otherwise both are as in 0160 and 0161.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhook_endpoints add column failing_since timestamptz`.execute(db);
  await sql`drop function mpay_claim_webhook_deliveries(timestamptz, timestamptz, uuid, integer, integer)`.execute(db);
  await sql.raw(`
    create function mpay_claim_webhook_deliveries(p_now timestamptz, p_until timestamptz, p_token uuid, p_per_endpoint integer, p_batch integer,
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
    $$`).execute(db);

  await sql.raw(`
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
    $$`).execute(db);
}
