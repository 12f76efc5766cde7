-- Moves the credential epoch (credential_epoch, one row) in the transaction of every change that takes a right away or
-- changes a principal: an API key revoked or rolled, a seller key rolled, a merchant's tokens revoked, a session ended or switched between
-- modes, a dashboard user's role changed or the user removed. The api processes' credential caches trust an entry only
-- while the epoch read after the request arrived is the one the entry was read under (credential-cache.ts), so the
-- change holds for every process from its commit. A session's idle deadline sliding on each use does not move it: the
-- cache never grants past the deadline it read, and asks the database again after it.
create or replace function mpay_credentials_changed() returns trigger language plpgsql as $$
begin
  update credential_epoch set epoch = epoch + 1 where id;
  return null;
end
$$;

create or replace trigger api_keys_credentials_changed
  after update of revoked_at, kind, merchant_id, key_hash or delete on api_keys
  for each statement execute function mpay_credentials_changed();

create or replace trigger merchants_credentials_changed
  after update of tokens_not_before or delete on merchants
  for each statement execute function mpay_credentials_changed();

create or replace trigger merchant_sessions_credentials_changed
  after update of revoked_at, is_sandbox, expires_at, merchant_id, merchant_user_id, token_hash, user_id or delete
  on merchant_sessions
  for each statement execute function mpay_credentials_changed();

create or replace trigger merchant_users_credentials_changed
  after update of role, removed_at, merchant_id or delete on merchant_users
  for each statement execute function mpay_credentials_changed();

create or replace trigger sellers_credentials_changed
  after update of key_hash, is_sandbox or delete on sellers
  for each statement execute function mpay_credentials_changed();
