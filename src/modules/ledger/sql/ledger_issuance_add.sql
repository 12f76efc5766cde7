-- An issuance account may go below zero (it is never checked), so a posting only adds to its balance, without reading
-- it under a lock: the move goes to the lowest stripe no other transaction holds (FOR UPDATE SKIP LOCKED), and a new
-- stripe opens only when every one is held, so postings to one issuance account never wait for each other. Its
-- balance is its `ledger_accounts` row plus the sum of its stripes.
create or replace function ledger_issuance_add(p_account text, p_delta bigint) returns void language plpgsql as $$
declare
  v_stripe smallint;
begin
  select s.stripe into v_stripe from ledger_issuance_stripes s where s.account = p_account
  order by s.stripe limit 1 for update skip locked;
  if found then
    update ledger_issuance_stripes s set delta_micro_pay = s.delta_micro_pay + p_delta
    where s.account = p_account and s.stripe = v_stripe;
  else
    -- every stripe is held by a transaction in flight (or there is none yet): open one more; two opening the same
    -- one at once share it, the second waiting for the first
    insert into ledger_issuance_stripes as s (account, stripe, delta_micro_pay)
    select p_account, coalesce(max(t.stripe) + 1, 0), p_delta from ledger_issuance_stripes t where t.account = p_account
    on conflict (account, stripe) do update set delta_micro_pay = s.delta_micro_pay + excluded.delta_micro_pay;
  end if;
end $$;
