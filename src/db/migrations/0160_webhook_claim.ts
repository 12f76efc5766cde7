import { sql, type Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Issue 11: the webhook dispatcher's claim (src/modules/webhooks/dispatcher.ts, claimDue) as one function.
 *
 * - An endpoint's free slots are counted in SQL (the cap less its live leases) and only that many of its rows can
 *   enter the batch, so an endpoint at its in-flight cap (a slow or dead one) is left out before the batch is cut,
 *   however long its backlog. The batch used to be cut first (the oldest 4x batch candidates) and the cap applied
 *   after: a backlog longer than that window hid every other merchant's events.
 * - Only the oldest pending event of an ordering key per endpoint is claimable (per-resource order, unchanged).
 * - The chosen rows are locked `for update skip locked` and checked again there (still pending, still unleased), so
 *   several workers share the queue without sending an event twice.
 * - A function, because the statement costs several times more to plan than to run and a pass runs on every
 *   wake-up: PL/pgSQL keeps its plan per connection.
 *
 * Leased rows are the few being sent right now (a recorded attempt clears the lease): a partial index over them
 * keeps the count of each endpoint's leases off the pending backlog.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create index webhook_deliveries_leased on webhook_deliveries (claimed_until, endpoint_id) where status = 'pending' and claimed_until is not null;
  `,
  );
  await sql.raw(`
    create function mpay_claim_webhook_deliveries(p_now timestamptz, p_until timestamptz, p_token uuid, p_per_endpoint integer, p_batch integer)
    returns table (delivery_id uuid, event_id text, is_sandbox boolean, ordering_key text, payload jsonb, endpoint_id uuid, url text,
                   secret_sealed text, previous_secret_sealed text, previous_secret_expires_at timestamptz)
    language plpgsql as $$
    #variable_conflict use_column
    begin
      return query
      with leased as (
        select l.endpoint_id, count(*) as n from webhook_deliveries l
        where l.status = 'pending' and l.claimed_until is not null and l.claimed_until > p_now
        group by l.endpoint_id
      ),
      heads as (
        select d.id, d.event_seq, coalesce(l.n, 0) + row_number() over (partition by d.endpoint_id order by d.event_seq) as slot
        from webhook_deliveries d
        join webhook_endpoints w on w.id = d.endpoint_id
        left join leased l on l.endpoint_id = d.endpoint_id
        where d.status = 'pending'
          and d.next_attempt_at <= p_now
          and (d.claimed_until is null or d.claimed_until < p_now)
          and coalesce(l.n, 0) < p_per_endpoint
          -- a disabled endpoint's deliveries wait (they go out if it is enabled again); a deleted one's were skipped
          and not w.disabled and w.deleted_at is null
          and not exists (
            select 1 from webhook_deliveries earlier
            where earlier.status = 'pending' and earlier.endpoint_id = d.endpoint_id and earlier.ordering_key = d.ordering_key
              and earlier.event_seq < d.event_seq
          )
      ),
      picked as (
        select d.id from webhook_deliveries d
        where d.id in (select h.id from heads h where h.slot <= p_per_endpoint order by h.event_seq limit p_batch)
          and d.status = 'pending' and (d.claimed_until is null or d.claimed_until < p_now)
        for update skip locked
      ),
      claimed as (
        update webhook_deliveries d set claim_token = p_token, claimed_until = p_until
        from picked where d.id = picked.id
        returning d.id, d.event_id, d.event_seq, d.is_sandbox, d.ordering_key, d.endpoint_id
      )
      select c.id, c.event_id, c.is_sandbox, c.ordering_key, e.payload, w.id, w.url, w.secret_sealed, w.previous_secret_sealed, w.previous_secret_expires_at
      from claimed c
      join events e on e.id = c.event_id
      join webhook_endpoints w on w.id = c.endpoint_id
      order by c.event_seq;
    end
    $$`).execute(db);
}
