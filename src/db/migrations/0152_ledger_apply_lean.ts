import { sql, type Kysely } from 'kysely';

/**
 * Issue 11 ("Throughput"): the same write path as 0131 with fewer statements per item, same rules in the same order.
 * Measured per item on PostgreSQL, opening accounts with `insert ... on conflict do nothing` on every call cost about a
 * sixth of the function and the separate lock, read and two updates another sixth; now one statement locks both
 * accounts in name order (so A->B and B->A cannot deadlock) and reads them, accounts are opened only when that read
 * found one missing (as before: the credit account, and an issuance debit account; never a non-negative debit
 * account), and one UPDATE moves both balances. An applied item answers only its status and id (the caller knows the
 * rest: it sent them); replays and conflicts still answer the stored transfer. `ledger_apply` collects the answers in
 * an array (appending to a jsonb value copied it each time: quadratic in the batch size).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql
    .raw(
      `
    create or replace function ledger_apply_one(item jsonb, p_now timestamptz) returns jsonb language plpgsql as $$
    declare
      p_key text := item->>'key';
      p_kind text := item->>'kind';
      p_debit text := item->>'debit_account';
      p_credit text := item->>'credit_account';
      p_amount bigint := (item->>'amount_micro_pay')::bigint;
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
        -- the rows are locked as the sort returns them: in name order
        select coalesce(bool_or(a.name = p_debit), false), coalesce(bool_or(a.name = p_credit), false),
          bool_or(a.non_negative) filter (where a.name = p_debit), max(a.balance_micro_pay) filter (where a.name = p_debit)
        into debit_found, credit_found, debit_non_negative, debit_balance
        from (select l.name, l.non_negative, l.balance_micro_pay from ledger_accounts l where l.name in (p_debit, p_credit) order by l.name for update) a;
        exit when attempt = 2 or (credit_found and (debit_found or not (item->>'debit_issuance')::boolean));
        insert into ledger_accounts (name, non_negative, balance_micro_pay, created_at)
        select account.name, not account.issuance, 0, p_now
        from (values (p_credit, (item->>'credit_issuance')::boolean), (p_debit, (item->>'debit_issuance')::boolean)) as account (name, issuance)
        where account.name = p_credit or account.issuance
        on conflict (name) do nothing;
      end loop;
      if not debit_found or (debit_non_negative and debit_balance < p_amount) then
        return jsonb_build_object('status', 'insufficient_funds', 'key', p_key, 'debit_account', p_debit);
      end if;

      update ledger_accounts a set balance_micro_pay = a.balance_micro_pay + case when a.name = p_credit then p_amount else -p_amount end
      where a.name in (p_debit, p_credit);
      new_id := gen_random_uuid();
      insert into ledger_transfers (id, key, kind, debit_account, credit_account, amount_micro_pay, memo, created_at)
      values (new_id, p_key, p_kind, p_debit, p_credit, p_amount, item->>'memo', p_now);
      return jsonb_build_object('status', 'applied', 'id', new_id);
    end $$
  `,
    )
    .execute(db);
  await sql
    .raw(
      `
    create or replace function ledger_apply(items jsonb, atomic boolean, p_now timestamptz) returns jsonb language plpgsql as $$
    declare
      results jsonb[] := '{}';
      result jsonb;
      failed_at integer := null;
      item jsonb;
      position integer := 0;
    begin
      if not atomic then
        for item in select value from jsonb_array_elements(items) loop
          results := array_append(results, ledger_apply_one(item, p_now));
        end loop;
        return to_jsonb(results);
      end if;
      begin
        for item in select value from jsonb_array_elements(items) loop
          result := ledger_apply_one(item, p_now);
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
    end $$
  `,
    )
    .execute(db);
}
