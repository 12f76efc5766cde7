-- The journal is append-only row by row as well as by the statement-level guard (mpay_append_only).
create or replace function ledger_transfers_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'ledger_transfers is append-only: % refused', tg_op;
end
$$;

create or replace trigger ledger_transfers_append_only before update or delete on ledger_transfers
  for each row execute function ledger_transfers_append_only();
