-- A refund that succeeds gets its receipt: an unguessable `receipt_token` for its page (/receipts/<token>), in the
-- transaction that makes it succeed, whichever path does (a checked slip, the buyer's word, the sandbox).
create or replace function mpay_assign_refund_receipt() returns trigger language plpgsql as $$
begin
  new.receipt_token := replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', '');
  return new;
end
$$;

create or replace trigger refunds_assign_receipt before insert or update of status on refunds
  for each row when (new.status = 'succeeded' and new.receipt_token is null)
  execute function mpay_assign_refund_receipt();
