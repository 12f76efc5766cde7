import { sql, type Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Issue 11 ("no hot row"): an issuance account is no longer locked by the postings that move it. Every mint debits
 * one (`live:issuance:world` for pending funds and seller funding, the matcher's mint source, `sandbox:issuance:world`
 * for every sandbox payment's completion) and both ledger functions locked it FOR UPDATE until the caller's commit, so
 * every receiver-confirm of every merchant, and every sandbox completion, queued on one row: the bench measured the
 * confirm's mint at 31 ms on average, nearly all of it waiting for that lock.
 *
 * An issuance account may go below zero (it is never checked), so a posting needs only to add to its balance, not to
 * read it under a lock. Its moves now go to `ledger_issuance_stripes`, rows of (account, stripe, delta), through
 * `ledger_issuance_add`: it adds to the lowest stripe that no other transaction holds (FOR UPDATE SKIP LOCKED), and
 * opens another stripe only when every one is held, so postings to one issuance account never wait for each other
 * and the stripes grow to the account's concurrency, no further. Its balance is its `ledger_accounts` row (frozen from
 * here on) plus the sum of its stripes; `readBalances` and `verifyLedger` add them.
 * Accounts with a balance of their own are locked and checked exactly as before (in name order, the overdraft check in
 * item order); an issuance account is still opened when missing, and the journal's foreign keys still point at it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table ledger_issuance_stripes (
      account text not null references ledger_accounts(name),
      stripe smallint not null,
      delta_micro_pay bigint not null,
      primary key (account, stripe)
    );
  `,
  );
  await sql
    .raw(
      `
    create function ledger_issuance_add(p_account text, p_delta bigint) returns void language plpgsql as $$
    declare
      v_stripe smallint;
    begin
      select s.stripe into v_stripe from ledger_issuance_stripes s where s.account = p_account
      order by s.stripe limit 1 for update skip locked;
      if found then
        update ledger_issuance_stripes s set delta_micro_pay = s.delta_micro_pay + p_delta where s.account = p_account and s.stripe = v_stripe;
      else
        -- every stripe is held by a transaction in flight (or there is none yet): open one more; two opening the same
        -- one at once share it, the second waiting for the first
        insert into ledger_issuance_stripes as s (account, stripe, delta_micro_pay)
        select p_account, coalesce(max(t.stripe) + 1, 0), p_delta from ledger_issuance_stripes t where t.account = p_account
        on conflict (account, stripe) do update set delta_micro_pay = s.delta_micro_pay + excluded.delta_micro_pay;
      end if;
    end $$
  `,
    )
    .execute(db);
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
    end $$
  `,
    )
    .execute(db);
  await sql
    .raw(
      `
    create or replace function ledger_apply_all(items jsonb, p_now timestamptz) returns jsonb language plpgsql as $$
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
      answers jsonb;
      v_account text;
      v_net bigint;
    begin
      if (select count(distinct k) from unnest(keys) k) < cardinality(keys) then return null; end if;
      perform pg_advisory_xact_lock(hashtextextended('ledger:' || k, 0)) from unnest(keys) k;
      perform 1 from ledger_transfers t where t.key = any(keys);
      if found then return null; end if;
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
      if refused then return null; end if;

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
  // create or replace resets the function's settings: 0162's custom plans again
  await sql.raw(`alter function ledger_apply_all(jsonb, timestamptz) set plan_cache_mode = force_custom_plan`).execute(db);
}
