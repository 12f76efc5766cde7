-- The guard of every append-only table (mpay_append_only): UPDATE, DELETE and TRUNCATE are refused, statement-level,
-- so even a statement that touches no row is.
create or replace function mpay_refuse_rewrite() returns trigger language plpgsql as $$
begin
  raise exception '% is append-only: % refused', tg_table_name, tg_op using errcode = 'raise_exception';
end
$$;
