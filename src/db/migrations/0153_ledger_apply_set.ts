import { sql, type Kysely } from 'kysely';

/**
 * Issue 11 ("Throughput"): a batch whose items all apply is applied set-based, in a fixed number of statements
 * whatever its size, instead of item by item (the matcher's mints and transferBatch are such batches).
 *
 * `ledger_apply_all(items, now)` applies every item or writes nothing and answers null; `ledger_apply` then runs the
 * item-by-item path of 0131/0152 unchanged, which gives refusals, replays and conflicts their answers (and an atomic
 * batch its rollback). Nothing differs when all items apply, so both paths answer the same: the same rules hold in
 * the same order, for the whole batch at once:
 * - every key's advisory lock (in key order, so two batches sharing keys wait instead of deadlocking); a key already in
 *   the journal, or twice in the batch, sends the batch item by item (replay or conflict);
 * - every account locked in name order; a missing account counts as empty (its non-negativity from its name, as when
 *   it is opened);
 * - the overdraft check in item order: the running balance of each non-negative account after each of its debits
 *   (an item may spend what an earlier one credited); any refusal sends the batch item by item;
 * - only then accounts are opened, as item by item: every credit account and every issuance debit account, never a
 *   non-negative debit account (one that is missing was refused above unless an earlier item credited it, which opens
 *   it). An account opened meanwhile by another transaction holds at least 0, so the check above still holds;
 * - one UPDATE moves each account by its net, one INSERT writes the journal rows in item order.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql
    .raw(
      `
    create function ledger_apply_all(items jsonb, p_now timestamptz) returns jsonb language plpgsql as $$
    declare
      keys text[] := array(select value->>'key' from jsonb_array_elements(items) order by 1);
      names text[] := array(
        select distinct m.account from jsonb_array_elements(items) i, lateral (values (i.value->>'debit_account'), (i.value->>'credit_account')) as m (account)
        order by 1);
      locked_count integer;
      refused boolean;
      answers jsonb;
    begin
      if (select count(distinct k) from unnest(keys) k) < cardinality(keys) then return null; end if;
      perform pg_advisory_xact_lock(hashtextextended('ledger:' || k, 0)) from unnest(keys) k;
      perform 1 from ledger_transfers t where t.key = any(keys);
      if found then return null; end if;
      -- the rows are locked as the sort returns them: in name order
      select count(*) into locked_count from (select l.name from ledger_accounts l where l.name = any(names) order by l.name for update) a;

      with item as (select value, ordinality as position from jsonb_array_elements(items) with ordinality),
      move as (
        select position, value->>'debit_account' as account, -(value->>'amount_micro_pay')::bigint as delta, (value->>'debit_issuance')::boolean as issuance from item
        union all
        select position, value->>'credit_account', (value->>'amount_micro_pay')::bigint, (value->>'credit_issuance')::boolean from item),
      running as (
        select m.delta, coalesce(a.non_negative, not m.issuance) as non_negative,
          coalesce(a.balance_micro_pay, 0) + sum(m.delta) over (partition by m.account order by m.position) as balance_after
        from move m left join ledger_accounts a on a.name = m.account)
      select exists (select 1 from running where non_negative and delta < 0 and balance_after < 0) into refused;
      if refused then return null; end if;

      if locked_count < cardinality(names) then
        insert into ledger_accounts (name, non_negative, balance_micro_pay, created_at)
        select distinct on (m.account) m.account, not m.issuance, 0, p_now
        from jsonb_array_elements(items) i,
          lateral (values (i.value->>'credit_account', (i.value->>'credit_issuance')::boolean, true), (i.value->>'debit_account', (i.value->>'debit_issuance')::boolean, false)) as m (account, issuance, credited)
        where m.credited or m.issuance
        order by m.account
        on conflict (name) do nothing;
        perform 1 from ledger_accounts l where l.name = any(names) order by l.name for update;
      end if;

      update ledger_accounts a set balance_micro_pay = a.balance_micro_pay + n.net
      from (
        select m.account, sum(m.delta) as net
        from jsonb_array_elements(items) i,
          lateral (values (i.value->>'debit_account', -(i.value->>'amount_micro_pay')::bigint), (i.value->>'credit_account', (i.value->>'amount_micro_pay')::bigint)) as m (account, delta)
        group by m.account) n
      where a.name = n.account and n.net <> 0;

      with written as (
        insert into ledger_transfers (id, key, kind, debit_account, credit_account, amount_micro_pay, memo, created_at)
        select gen_random_uuid(), value->>'key', value->>'kind', value->>'debit_account', value->>'credit_account', (value->>'amount_micro_pay')::bigint, value->>'memo', p_now
        from jsonb_array_elements(items) with ordinality order by ordinality
        returning id, key)
      select jsonb_agg(jsonb_build_object('status', 'applied', 'id', written.id) order by item.ordinality) into answers
      from jsonb_array_elements(items) with ordinality as item join written on written.key = item.value->>'key';
      return answers;
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
      if jsonb_array_length(items) > 1 then
        result := ledger_apply_all(items, p_now);
        if result is not null then return result; end if;
      end if;
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
