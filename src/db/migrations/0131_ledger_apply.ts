import { sql, type Kysely } from 'kysely';

/**
 * The ledger's write path as one SQL function, so a transfer is one round trip instead of seven, and a batch of
 * transfers is one round trip too. Same rules as before, in the same order: a per-key advisory lock, the
 * idempotency check (same fields: replay; other fields: conflict), accounts opened as needed (an unused
 * non-negative debit account is never opened), both accounts locked in name order, the overdraft check, the
 * balance moves and the append-only journal row. A refusal writes nothing for that item.
 *
 * `ledger_apply(items, atomic, now)`: `items` is a JSON array of {key, kind, debit_account, credit_account,
 * amount_micro_pay, memo, debit_issuance, credit_issuance}; it returns one JSON result per item, in order, with
 * `status` applied, replayed, insufficient_funds or conflict. With `atomic`, the first refusal undoes the items
 * before it (a subtransaction) and the others report not_applied: a transaction of several postings.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql
    .raw(
      `
    create function ledger_apply_one(item jsonb, p_now timestamptz) returns jsonb language plpgsql as $$
    declare
      p_key text := item->>'key';
      p_kind text := item->>'kind';
      p_debit text := item->>'debit_account';
      p_credit text := item->>'credit_account';
      p_amount bigint := (item->>'amount_micro_pay')::bigint;
      existing ledger_transfers%rowtype;
      debit_row ledger_accounts%rowtype;
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

      insert into ledger_accounts (name, non_negative, balance_micro_pay, created_at)
      select account.name, not account.issuance, 0, p_now
      from (values (p_credit, (item->>'credit_issuance')::boolean), (p_debit, (item->>'debit_issuance')::boolean)) as account (name, issuance)
      where account.name = p_credit or account.issuance
      on conflict (name) do nothing;

      perform 1 from ledger_accounts a where a.name in (p_debit, p_credit) order by a.name for update;
      select * into debit_row from ledger_accounts a where a.name = p_debit;
      if not found or (debit_row.non_negative and debit_row.balance_micro_pay < p_amount) then
        return jsonb_build_object('status', 'insufficient_funds', 'key', p_key, 'debit_account', p_debit);
      end if;

      update ledger_accounts a set balance_micro_pay = a.balance_micro_pay - p_amount where a.name = p_debit;
      update ledger_accounts a set balance_micro_pay = a.balance_micro_pay + p_amount where a.name = p_credit;
      new_id := gen_random_uuid();
      insert into ledger_transfers (id, key, kind, debit_account, credit_account, amount_micro_pay, memo, created_at)
      values (new_id, p_key, p_kind, p_debit, p_credit, p_amount, item->>'memo', p_now);
      return jsonb_build_object(
        'status', 'applied', 'id', new_id, 'key', p_key, 'kind', p_kind, 'debit_account', p_debit, 'credit_account', p_credit,
        'amount_micro_pay', p_amount, 'memo', item->>'memo', 'created_at_ms', floor(extract(epoch from p_now) * 1000)::bigint);
    end $$
  `,
    )
    .execute(db);
  await sql
    .raw(
      `
    create function ledger_apply(items jsonb, atomic boolean, p_now timestamptz) returns jsonb language plpgsql as $$
    declare
      results jsonb := '[]'::jsonb;
      result jsonb;
      failed_at integer := null;
      item jsonb;
      position integer := 0;
    begin
      if not atomic then
        for item in select value from jsonb_array_elements(items) loop
          results := results || jsonb_build_array(ledger_apply_one(item, p_now));
        end loop;
        return results;
      end if;
      begin
        for item in select value from jsonb_array_elements(items) loop
          result := ledger_apply_one(item, p_now);
          results := results || jsonb_build_array(result);
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
        into results from jsonb_array_elements(results) with ordinality;
      end;
      return results;
    end $$
  `,
    )
    .execute(db);
}
