-- The outbox's only writer of delivery rows, so every writer of events gets its deliveries in its own transaction: per
-- INSERT statement on events, one `pending` delivery per enabled endpoint of the event's merchant and mode subscribed
-- to its type, or one `skipped` delivery without endpoint when none is. A leg event (`leg.*`, whose data is the leg
-- as its seller sees it) also goes to the enabled live endpoints of the leg's seller subscribed to it, as deliveries
-- that name the seller. The trigger's name is DELIVERY_TRIGGER.
--
-- The merchant's deliveries are one INSERT over a LEFT JOIN: an event that no endpoint matched gets its `skipped` row
-- from the same scan. The seller's statement runs only when the statement inserted a leg event (most inserts, the
-- payment create's among them, have none).
create or replace function mpay_enqueue_webhook_delivery() returns trigger language plpgsql as $$
begin
  insert into webhook_deliveries (id, event_id, event_seq, merchant_id, is_sandbox, resource_id, ordering_key, status, next_attempt_at, created_at, endpoint_id, last_error)
  select gen_random_uuid(), n.id, n.seq, n.merchant_id, n.is_sandbox, n.resource_id, n.resource_id,
    case when e.id is null then 'skipped' else 'pending' end, n.created_at, n.created_at, e.id,
    case when e.id is null then 'no webhook endpoint subscribed' end
  from inserted n
  left join webhook_endpoints e on e.merchant_id = n.merchant_id and e.is_sandbox = n.is_sandbox
    and e.deleted_at is null and not e.disabled
    and (e.enabled_events @> '["*"]'::jsonb or e.enabled_events @> jsonb_build_array(n.type));

  if exists (select from inserted n where n.type like 'leg.%') then
    insert into webhook_deliveries (id, event_id, event_seq, merchant_id, is_sandbox, resource_id, ordering_key, status, next_attempt_at, created_at, endpoint_id, seller_id)
    select gen_random_uuid(), n.id, n.seq, n.merchant_id, n.is_sandbox, n.resource_id, n.resource_id, 'pending', n.created_at, n.created_at, e.id, e.seller_id
    from inserted n
    join webhook_endpoints e on e.seller_id::text = n.payload->'data'->>'seller_id' and e.is_sandbox = n.is_sandbox
    where n.type like 'leg.%' and e.seller_id is not null and e.deleted_at is null and not e.disabled
      and (e.enabled_events @> '["*"]'::jsonb or e.enabled_events @> jsonb_build_array(n.type));
  end if;
  return null;
end
$$;

create or replace trigger events_enqueue_webhook_delivery after insert on events
  referencing new table as inserted
  for each statement execute function mpay_enqueue_webhook_delivery();
