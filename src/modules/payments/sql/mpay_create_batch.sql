-- The batched payment create in one call with its rows as jsonb parameters (a fixed text: a named prepared statement
-- on PostgreSQL). In order: the idempotency keys with their responses, the payments, their legs, the
-- `payment.matched` events (their AFTER triggers run inside the call) and last the offers' reservation, so a seller's
-- row is locked for the reservation and the commit only. Any surprise refuses the whole call (mpay_refuse): a key in
-- use, an order_id in use, an offer that no longer covers its holds. Column lists are explicit: a column added later
-- gets its default here until this file names it. The statements keep PL/pgSQL's cached generic plans: none depends
-- on the values.
drop function if exists mpay_create_batch(jsonb, jsonb, jsonb, jsonb, uuid[], bigint[]);
drop function if exists mpay_create_batch(bigint, jsonb, jsonb, jsonb, jsonb, uuid[], bigint[]);

-- p_credential_epoch: the credential epoch the batch's requests' credentials were verified under (null: nothing to
-- check); the call refuses itself first when the epoch has moved since, so a credential revoked meanwhile creates
-- nothing (its requests authenticate again and run alone). Answers, unless p_offer_page is 0, the first p_offer_page
-- offers of each live book (currency and rail) the batch drew from as its reservation left them, which the batch
-- gathered beside this one plans from instead of reading them (OfferBook's page: FIFO, the same columns).
create or replace function mpay_create_batch(p_credential_epoch bigint, p_claims jsonb, p_payments jsonb,
                                             p_legs jsonb, p_events jsonb, p_seller_ids uuid[], p_held_minor bigint[],
                                             p_offer_page integer)
returns jsonb language plpgsql as $$
declare
  written bigint;
begin
  if p_credential_epoch is not null and p_credential_epoch <> (select epoch from credential_epoch) then
    perform mpay_refuse('credentials changed');
  end if;

  if p_claims is not null then
    if mpay_store_idempotency_keys(p_claims) <> jsonb_array_length(p_claims) then
      perform mpay_refuse('an idempotency key in use');
    end if;
  end if;

  insert into payments (id, merchant_id, is_sandbox, order_id, amount_minor, currency, payment_method, return_url, status,
    metadata, quote_lock_id, failure_reason, synthetic_match, settlement_id, expires_at, created_at, matched_at,
    checkout_opened_at, confirming_at, completed_at, failed_at, expired_at, cancelled_at, settled_at, payment_link_id)
  select id, merchant_id, is_sandbox, order_id, amount_minor, currency, payment_method, return_url, status,
    metadata, quote_lock_id, failure_reason, synthetic_match, settlement_id, expires_at, created_at, matched_at,
    checkout_opened_at, confirming_at, completed_at, failed_at, expired_at, cancelled_at, settled_at, payment_link_id
  from jsonb_populate_recordset(null::payments, p_payments)
  on conflict on constraint payments_order_id_unique do nothing;
  get diagnostics written = row_count;
  if written <> jsonb_array_length(p_payments) then perform mpay_refuse('an order_id in use'); end if;

  insert into payment_legs (payment_id, seller_id, match_order, allocated_fiat_amount, rate, amount_micro_pay, reserved_minor)
  select payment_id, seller_id, match_order, allocated_fiat_amount, rate, amount_micro_pay, reserved_minor
  from jsonb_populate_recordset(null::payment_legs, p_legs);

  perform mpay_append_events(p_events);
  -- The dispatchers' wake-up, delivered when the call commits, and only when an event queued a delivery to send: an
  -- event of a merchant with no subscribed endpoint gets a skipped delivery, which no dispatcher needs to hear of.
  -- (an index probe per event, `= any` of the ids, whatever the statistics say of the pending backlog)
  if exists (select 1 from webhook_deliveries d
             where d.event_id = any (array(select e.value->>'id' from jsonb_array_elements(p_events) as e(value)))
               and d.status = 'pending') then
    perform pg_notify('mpay_events', '');
  end if;

  if cardinality(p_seller_ids) > 0 then
    if mpay_reserve_offers(p_seller_ids, p_held_minor) <> cardinality(p_seller_ids) then
      perform mpay_refuse('an offer taken');
    end if;
  end if;

  if p_offer_page = 0 then return null; end if;
  -- the first page of each live book the batch drew from, as the reservation left it (OfferBook's read, FIFO)
  return (
    select coalesce(jsonb_agg(jsonb_build_object('currency', b.currency, 'payment_method', b.payment_method,
      'offers', (
        select coalesce(jsonb_agg(jsonb_build_object('id', s.id, 'rate', s.rate::text,
          'available_minor', s.liquidity_minor - s.reserved_minor, 'created_at', s.created_at::text)
          order by s.rate, s.created_at, s.id), '[]')
        from (
          select o.id, o.rate, o.liquidity_minor, o.reserved_minor, o.created_at from sellers o
          where o.is_sandbox = false and o.currency = b.currency and o.payment_method = b.payment_method and o.active
            and o.liquidity_minor > o.reserved_minor
          order by o.rate, o.created_at, o.id
          limit p_offer_page
        ) s))), '[]')
    from (
      select distinct p.currency, p.payment_method
      from jsonb_to_recordset(p_payments) as p (currency text, payment_method text, is_sandbox boolean)
      where not p.is_sandbox
    ) b
  );
end
$$;
