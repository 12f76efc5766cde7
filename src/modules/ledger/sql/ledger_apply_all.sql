-- The ledger's one apply path: a set of transfers applied set-based, in a fixed number of statements whatever its
-- size. Every item applies, or nothing is written; a set of several then answers null (ledger_apply runs its items as
-- sets of one), a set of one answers why: replayed or conflict (its key in the journal: the same move, or another),
-- or insufficient_funds. The rules, for the whole set at once:
-- - every key's advisory lock in key order (two sets sharing keys wait instead of deadlocking); a key already in the
--   journal, or twice in the set, stops it;
-- - accounts with a balance of their own locked in name order; a missing account counts as empty;
-- - the overdraft check in item order (an item may spend what an earlier one credited); a refusal stops it;
-- - then accounts are opened (every credit account and issuance debit account, never a non-negative debit account),
--   one UPDATE moves each account by its net (issuance accounts through their stripes), one INSERT writes the journal
--   (ledger_write_journal).
-- Custom plans: a generic plan cached after a few calls on an almost empty journal runs large batches far slower.
create or replace function ledger_apply_all(items jsonb, p_now timestamptz) returns jsonb language plpgsql
set plan_cache_mode = force_custom_plan as $$
declare
  keys text[] := array(select value->>'key' from jsonb_array_elements(items) order by 1);
  -- every account the batch names, and those of them with a balance of their own (locked)
  names text[] := array(
    select distinct m.account from jsonb_array_elements(items) i, lateral (values (i.value->>'debit_account'), (i.value->>'credit_account')) as m (account)
    order by 1);
  owned text[] := array(
    select distinct m.account from jsonb_array_elements(items) i,
      lateral (values (i.value->>'debit_account', (i.value->>'debit_issuance')::boolean), (i.value->>'credit_account', (i.value->>'credit_issuance')::boolean)) as m (account, issuance)
    where not m.issuance
    order by 1);
  found_count integer;
  refused boolean;
  existing ledger_transfers%rowtype;
  lone jsonb := case when jsonb_array_length(items) = 1 then items->0 end;
  v_account text;
  v_net bigint;
begin
  if (select count(distinct k) from unnest(keys) k) < cardinality(keys) then return null; end if;
  perform pg_advisory_xact_lock(hashtextextended('ledger:' || k, 0)) from unnest(keys) k;
  select * into existing from ledger_transfers t where t.key = any(keys) limit 1;
  if found then
    if lone is null then return null; end if;
    -- the idempotency rule: the same key with the same move replays it, with another move is a conflict (memo aside)
    return jsonb_build_array(jsonb_build_object(
      'status', case when existing.kind = lone->>'kind' and existing.debit_account = lone->>'debit_account'
        and existing.credit_account = lone->>'credit_account' and existing.amount_micro_pay = (lone->>'amount_micro_pay')::bigint
        then 'replayed' else 'conflict' end,
      'id', existing.id, 'key', existing.key, 'kind', existing.kind, 'debit_account', existing.debit_account,
      'credit_account', existing.credit_account, 'amount_micro_pay', existing.amount_micro_pay, 'memo', existing.memo,
      'created_at_ms', floor(extract(epoch from existing.created_at) * 1000)::bigint));
  end if;
  -- the rows are locked as the sort returns them: in name order
  perform 1 from ledger_accounts l where l.name = any(owned) order by l.name for update;

  with item as (select value, ordinality as position from jsonb_array_elements(items) with ordinality),
  move as (
    select position, value->>'debit_account' as account, -(value->>'amount_micro_pay')::bigint as delta, (value->>'debit_issuance')::boolean as issuance from item
    union all
    select position, value->>'credit_account', (value->>'amount_micro_pay')::bigint, (value->>'credit_issuance')::boolean from item),
  running as (
    select m.delta, not m.issuance and coalesce(a.non_negative, true) as non_negative,
      coalesce(a.balance_micro_pay, 0) + sum(m.delta) over (partition by m.account order by m.position) as balance_after
    from move m left join ledger_accounts a on a.name = m.account)
  select exists (select 1 from running where non_negative and delta < 0 and balance_after < 0) into refused;
  if refused then
    if lone is null then return null; end if;
    return jsonb_build_array(jsonb_build_object('status', 'insufficient_funds', 'key', lone->>'key', 'debit_account', lone->>'debit_account'));
  end if;

  select count(*) into found_count from ledger_accounts l where l.name = any(names);
  if found_count < cardinality(names) then
    insert into ledger_accounts (name, non_negative, balance_micro_pay, created_at)
    select distinct on (m.account) m.account, not m.issuance, 0, p_now
    from jsonb_array_elements(items) i,
      lateral (values (i.value->>'credit_account', (i.value->>'credit_issuance')::boolean, true), (i.value->>'debit_account', (i.value->>'debit_issuance')::boolean, false)) as m (account, issuance, credited)
    where m.credited or m.issuance
    order by m.account
    on conflict (name) do nothing;
    perform 1 from ledger_accounts l where l.name = any(owned) order by l.name for update;
  end if;

  -- the issuance accounts' nets to their stripes, the others' to their rows (locked above)
  for v_account, v_net in
    select m.account, sum(m.delta)
    from jsonb_array_elements(items) i,
      lateral (values (i.value->>'debit_account', -(i.value->>'amount_micro_pay')::bigint, (i.value->>'debit_issuance')::boolean),
                      (i.value->>'credit_account', (i.value->>'amount_micro_pay')::bigint, (i.value->>'credit_issuance')::boolean)) as m (account, delta, issuance)
    group by m.account
    having sum(m.delta) <> 0 and bool_or(m.issuance)
    order by m.account
  loop
    perform ledger_issuance_add(v_account, v_net);
  end loop;
  update ledger_accounts a set balance_micro_pay = a.balance_micro_pay + n.net
  from (
    select m.account, sum(m.delta) as net
    from jsonb_array_elements(items) i,
      lateral (values (i.value->>'debit_account', -(i.value->>'amount_micro_pay')::bigint), (i.value->>'credit_account', (i.value->>'amount_micro_pay')::bigint)) as m (account, delta)
    group by m.account) n
  where a.name = n.account and n.net <> 0 and a.name = any(owned);

  return ledger_write_journal(items, p_now);
end $$;
