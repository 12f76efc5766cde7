-- Stores idempotency keys with their responses (the batched payment create's keyed requests); a key already in use is
-- skipped. Answers how many it stored: fewer than given means the caller must refuse.
create or replace function mpay_store_idempotency_keys(p_claims jsonb) returns bigint language plpgsql as $$
declare
  written bigint;
begin
  insert into idempotency_keys (merchant_id, is_sandbox, method, path, key, fingerprint, created_at, response_status, response_body)
  select merchant_id, is_sandbox, method, path, key, fingerprint, created_at, response_status, response_body
  from jsonb_populate_recordset(null::idempotency_keys, p_claims)
  on conflict (merchant_id, is_sandbox, method, path, key) do nothing;
  get diagnostics written = row_count;
  return written;
end
$$;
