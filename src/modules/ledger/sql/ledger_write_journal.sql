-- The journal rows of a set that applies (ledger_apply_all, after its checks and postings), written in item order and
-- answered as [{"status": "applied", "id": ...}] in item order. A function of its own so that it runs under the default
-- plan cache: each row's two account-key checks then reuse their cached plans, where under the caller's
-- force_custom_plan they would be planned again for every row.
create or replace function ledger_write_journal(items jsonb, p_now timestamptz) returns jsonb language plpgsql
set plan_cache_mode = auto as $$
declare
  answers jsonb;
begin
  with written as (
    insert into ledger_transfers (id, key, kind, debit_account, credit_account, amount_micro_pay, memo, created_at)
    select gen_random_uuid(), value->>'key', value->>'kind', value->>'debit_account', value->>'credit_account', (value->>'amount_micro_pay')::bigint, value->>'memo', p_now
    from jsonb_array_elements(items) with ordinality order by ordinality
    returning id, key)
  select jsonb_agg(jsonb_build_object('status', 'applied', 'id', written.id) order by item.ordinality) into answers
  from jsonb_array_elements(items) with ordinality as item join written on written.key = item.value->>'key';
  return answers;
end $$;
