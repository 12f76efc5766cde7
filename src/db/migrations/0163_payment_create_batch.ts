import { sql, type Kysely } from 'kysely';

/**
 * Issue 11 ("Throughput"): the batched payment create writes through one function call with its rows as jsonb
 * parameters, instead of a statement of data-modifying CTEs whose text held the rows inlined. That text was new on
 * every batch, so PostgreSQL parsed, analysed and planned tens of kilobytes each time, and on PostgreSQL the batch
 * needed a second statement (the simple query protocol, parameters inlined as literals) to reserve after the writes'
 * triggers. A call has a fixed text: it is a named prepared statement, its parameters are bound, and the same call
 * runs on PGlite.
 *
 * In order: the idempotency keys with their stored responses (when the batch has keyed requests), the payments, their
 * legs, the `payment.matched` events (whose AFTER triggers, the foreign keys and the webhook fan-out, run at the end of
 * each INSERT, inside the call), and last the reservation, one conditional update per seller with the offers locked in
 * FIFO order (rate, created_at, id: two batches never deadlock), each only if it still covers what the batch holds of
 * it. A seller's row is thus locked for the reservation and the commit only.
 *
 * Any surprise refuses the whole call (mpay_refuse, so nothing of it is kept): a key in use, an order_id in use, an
 * offer that no longer covers its holds or is no longer active. The caller then runs the batch the transactional way,
 * which settles each of those cases request by request. Column lists are explicit: a column added later gets its
 * default here until this function is replaced.
 *
 * `mpay_reserve_offers(seller_ids, held_minor)` is that reservation alone, answering how many offers it reserved (fewer
 * than asked: the caller must roll back); the transactional way (reserveLegs) makes it its last write too.
 *
 * Unlike ledger_apply_all (0162), the statements keep the cached generic plans PL/pgSQL switches to: none depends on
 * the values (inserts from a parameter; the reservation by primary key, checked with 5,000 inactive and 5,000 active
 * offers behind the one reserved). Planning each call for its own values cost the bench's create 633 us of database
 * CPU against 387 us with them, through one api process.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // also the transactional way's last write (reserveLegs): one reservation statement for both
  await sql
    .raw(
      `
    create function mpay_reserve_offers(p_seller_ids uuid[], p_held_minor bigint[]) returns bigint language plpgsql as $$
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
    $$`,
    )
    .execute(db);
  await sql
    .raw(
      `
    create function mpay_create_batch(p_claims jsonb, p_payments jsonb, p_legs jsonb, p_events jsonb, p_seller_ids uuid[], p_held_minor bigint[])
    returns void language plpgsql as $$
    declare
      written bigint;
    begin
      if p_claims is not null then
        insert into idempotency_keys (merchant_id, is_sandbox, method, path, key, fingerprint, created_at, response_status, response_body)
        select merchant_id, is_sandbox, method, path, key, fingerprint, created_at, response_status, response_body
        from jsonb_populate_recordset(null::idempotency_keys, p_claims)
        on conflict (merchant_id, is_sandbox, method, path, key) do nothing;
        get diagnostics written = row_count;
        if written <> jsonb_array_length(p_claims) then perform mpay_refuse('an idempotency key in use'); end if;
      end if;

      insert into payments (id, merchant_id, is_sandbox, order_id, amount_minor, currency, payment_method, return_url, status, metadata,
        quote_lock_id, failure_reason, synthetic_match, settlement_id, expires_at, created_at, matched_at, checkout_opened_at, confirming_at,
        completed_at, failed_at, expired_at, cancelled_at, settled_at)
      select id, merchant_id, is_sandbox, order_id, amount_minor, currency, payment_method, return_url, status, metadata,
        quote_lock_id, failure_reason, synthetic_match, settlement_id, expires_at, created_at, matched_at, checkout_opened_at, confirming_at,
        completed_at, failed_at, expired_at, cancelled_at, settled_at
      from jsonb_populate_recordset(null::payments, p_payments)
      on conflict on constraint payments_order_id_unique do nothing;
      get diagnostics written = row_count;
      if written <> jsonb_array_length(p_payments) then perform mpay_refuse('an order_id in use'); end if;

      insert into payment_legs (payment_id, seller_id, match_order, allocated_fiat_amount, rate, amount_micro_pay, reserved_minor)
      select payment_id, seller_id, match_order, allocated_fiat_amount, rate, amount_micro_pay, reserved_minor
      from jsonb_populate_recordset(null::payment_legs, p_legs);

      insert into events (id, merchant_id, is_sandbox, type, resource_type, resource_id, payload, created_at)
      select id, merchant_id, is_sandbox, type, resource_type, resource_id, payload, created_at
      from jsonb_populate_recordset(null::events, p_events);

      if cardinality(p_seller_ids) > 0 then
        if mpay_reserve_offers(p_seller_ids, p_held_minor) <> cardinality(p_seller_ids) then perform mpay_refuse('an offer taken'); end if;
      end if;
    end
    $$`,
    )
    .execute(db);
}
