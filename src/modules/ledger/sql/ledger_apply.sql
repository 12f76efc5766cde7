-- The ledger's write path: `items` is a JSON array of {key, kind, debit_account, credit_account, amount_micro_pay, memo,
-- debit_issuance, credit_issuance}; the answer is one JSON result per item, in order, with `status` applied, replayed,
-- insufficient_funds or conflict. The items go as one set (ledger_apply_all); when that set stops, each item goes as
-- a set of one, in order. With `atomic`, the first refusal undoes the items before it (a subtransaction) and the
-- others answer not_applied.
-- the item-by-item function the sets of one replace
drop function if exists ledger_apply_one(jsonb, timestamptz);

create or replace function ledger_apply(items jsonb, atomic boolean, p_now timestamptz) returns jsonb language plpgsql as $$
declare
  results jsonb[] := '{}';
  result jsonb;
  failed_at integer := null;
  item jsonb;
  position integer := 0;
begin
  if jsonb_array_length(items) > 1 then
    result := ledger_apply_all(items, p_now);
    if result is not null then return result; end if;
  end if;
  if not atomic then
    for item in select value from jsonb_array_elements(items) loop
      results := array_append(results, ledger_apply_all(jsonb_build_array(item), p_now)->0);
    end loop;
    return to_jsonb(results);
  end if;
  begin
    for item in select value from jsonb_array_elements(items) loop
      result := ledger_apply_all(jsonb_build_array(item), p_now)->0;
      results := array_append(results, result);
      if result->>'status' in ('insufficient_funds', 'conflict') then
        failed_at := position;
        raise exception using errcode = 'P0001', message = 'mpay_ledger_rollback';
      end if;
      position := position + 1;
    end loop;
  exception when raise_exception then
    if sqlerrm <> 'mpay_ledger_rollback' then raise; end if;
    -- the subtransaction undid every item before the refused one: report them as not applied
    select coalesce(jsonb_agg(case when ordinality - 1 = failed_at then value else jsonb_build_object('status', 'not_applied', 'key', value->>'key') end order by ordinality), '[]'::jsonb)
    into result from unnest(results) with ordinality as answer (value, ordinality);
    return result;
  end;
  return to_jsonb(results);
end $$;
