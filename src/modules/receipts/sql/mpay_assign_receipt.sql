-- A payment that completes (or ends partly paid) gets its receipt: the next `receipt_number` of its merchant and mode,
-- and an unguessable `receipt_token` for its page (/receipts/<token>), in the transaction that completes it, whichever
-- path completes it. The number comes from the merchant's row in receipt_sequences, locked until that transaction
-- ends: concurrent completions take consecutive numbers, and a completion that rolls back gives its number back, so
-- the numbers have no gaps and no duplicates (the unique index payments_receipt_number is the second half).
create or replace function mpay_assign_receipt() returns trigger language plpgsql as $$
begin
  insert into receipt_sequences as s (merchant_id, is_sandbox, kind, last_number)
    values (new.merchant_id, new.is_sandbox, 'payment', 1)
    on conflict (merchant_id, is_sandbox, kind) do update set last_number = s.last_number + 1
    returning last_number into new.receipt_number;
  new.receipt_token := replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', '');
  return new;
end
$$;

create or replace trigger payments_assign_receipt before update of status on payments
  for each row when (new.receipt_number is null and new.status in ('completed', 'partially_paid', 'settled'))
  execute function mpay_assign_receipt();
