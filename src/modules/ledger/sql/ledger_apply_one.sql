-- One transfer, in order: the key's advisory lock, the idempotency check (same fields: replayed; other fields:
-- conflict), accounts opened as needed (an unused non-negative debit account never is), accounts with a balance of
-- their own locked in name order, the overdraft check, the balances moved (issuance accounts through
-- ledger_issuance_add) and the journal row. A refusal writes nothing.
create or replace function ledger_apply_one(item jsonb, p_now timestamptz) returns jsonb language plpgsql as $$
declare
  p_key text := item->>'key';
  p_kind text := item->>'kind';
  p_debit text := item->>'debit_account';
  p_credit text := item->>'credit_account';
  p_amount bigint := (item->>'amount_micro_pay')::bigint;
  debit_issuance boolean := (item->>'debit_issuance')::boolean;
  credit_issuance boolean := (item->>'credit_issuance')::boolean;
  existing ledger_transfers%rowtype;
  debit_found boolean;
  credit_found boolean;
  debit_non_negative boolean;
  debit_balance bigint;
  new_id uuid;
begin
  perform pg_advisory_xact_lock(hashtextextended('ledger:' || p_key, 0));
  select * into existing from ledger_transfers t where t.key = p_key;
  if found then
    return jsonb_build_object(
      'status', case when existing.kind = p_kind and existing.debit_account = p_debit and existing.credit_account = p_credit and existing.amount_micro_pay = p_amount then 'replayed' else 'conflict' end,
      'id', existing.id, 'key', existing.key, 'kind', existing.kind, 'debit_account', existing.debit_account,
      'credit_account', existing.credit_account, 'amount_micro_pay', existing.amount_micro_pay, 'memo', existing.memo,
      'created_at_ms', floor(extract(epoch from existing.created_at) * 1000)::bigint);
  end if;

  for attempt in 1..2 loop
    -- accounts with a balance of their own are locked in name order; an issuance account is only looked up
    perform 1 from ledger_accounts l
    where (l.name = p_debit and not debit_issuance) or (l.name = p_credit and not credit_issuance)
    order by l.name for update;
    select coalesce(bool_or(a.name = p_debit), false), coalesce(bool_or(a.name = p_credit), false),
      bool_or(a.non_negative and not debit_issuance) filter (where a.name = p_debit), max(a.balance_micro_pay) filter (where a.name = p_debit)
    into debit_found, credit_found, debit_non_negative, debit_balance
    from ledger_accounts a where a.name in (p_debit, p_credit);
    exit when attempt = 2 or (credit_found and (debit_found or not debit_issuance));
    insert into ledger_accounts (name, non_negative, balance_micro_pay, created_at)
    select account.name, not account.issuance, 0, p_now
    from (values (p_credit, credit_issuance), (p_debit, debit_issuance)) as account (name, issuance)
    where account.name = p_credit or account.issuance
    on conflict (name) do nothing;
  end loop;
  if not debit_found or (debit_non_negative and debit_balance < p_amount) then
    return jsonb_build_object('status', 'insufficient_funds', 'key', p_key, 'debit_account', p_debit);
  end if;

  update ledger_accounts a set balance_micro_pay = a.balance_micro_pay + case when a.name = p_credit then p_amount else -p_amount end
  where (a.name = p_debit and not debit_issuance) or (a.name = p_credit and not credit_issuance);
  if debit_issuance then perform ledger_issuance_add(p_debit, -p_amount); end if;
  if credit_issuance then perform ledger_issuance_add(p_credit, p_amount); end if;
  new_id := gen_random_uuid();
  insert into ledger_transfers (id, key, kind, debit_account, credit_account, amount_micro_pay, memo, created_at)
  values (new_id, p_key, p_kind, p_debit, p_credit, p_amount, item->>'memo', p_now);
  return jsonb_build_object('status', 'applied', 'id', new_id);
end $$;
