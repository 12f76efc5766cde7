-- A payment link's limits count completed payments: each payment made from a link that completes adds one to the
-- link's `payments_completed`, in the completing transaction, whichever path completes it (the verdict worker, the
-- sandbox). Counting never refuses: a payment that completes on a link already used up is still the merchant's.
-- Settling a completed payment does not count it again.
create or replace function mpay_count_link_payment() returns trigger language plpgsql as $$
begin
  update payment_links set payments_completed = payments_completed + 1 where id = new.payment_link_id;
  return null;
end
$$;

create or replace trigger payments_count_link_payment after update of status on payments
  for each row when (new.payment_link_id is not null and new.status = 'completed' and old.status <> 'completed')
  execute function mpay_count_link_payment();
