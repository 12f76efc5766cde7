-- The receiver-confirm audit is evidence: row-level UPDATE, DELETE and TRUNCATE are refused, always (archival copies
-- rows to the archive and removes nothing).
create or replace function receiver_confirm_audit_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'receiver_confirm_audit is append-only: % refused', tg_op;
end
$$;

create or replace trigger receiver_confirm_audit_append_only before update or delete on receiver_confirm_audit
  for each row execute function receiver_confirm_audit_append_only();

create or replace trigger receiver_confirm_audit_no_truncate before truncate on receiver_confirm_audit
  for each statement execute function receiver_confirm_audit_append_only();
