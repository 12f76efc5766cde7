-- Appends outbox events given as a jsonb array of rows, in one INSERT (so the delivery trigger fans out once).
create or replace function mpay_append_events(p_events jsonb) returns void language plpgsql as $$
begin
  insert into events (id, merchant_id, is_sandbox, type, resource_type, resource_id, payload, created_at)
  select id, merchant_id, is_sandbox, type, resource_type, resource_id, payload, created_at
  from jsonb_populate_recordset(null::events, p_events);
end
$$;
