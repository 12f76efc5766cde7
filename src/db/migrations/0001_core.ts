import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table settings (
      key text primary key,
      value text not null
    );

    create table merchants (
      id uuid primary key,
      name text not null,
      webhook_url text,
      -- HMAC needs the raw secret to sign; it is never logged and only shown on creation and rotation.
      webhook_secret text,
      created_at timestamptz not null
    );

    create table api_keys (
      id uuid primary key,
      merchant_id uuid not null references merchants(id),
      kind text not null check (kind in ('live', 'test', 'sandbox')),
      key_hash text not null unique,
      key_hint text not null,
      created_at timestamptz not null,
      revoked_at timestamptz
    );
    create index api_keys_merchant on api_keys (merchant_id);

    create table merchant_sessions (
      id uuid primary key,
      token_hash text not null unique,
      merchant_id uuid not null references merchants(id),
      user_id text not null,
      expires_at timestamptz not null,
      created_at timestamptz not null
    );

    create table idempotency_keys (
      id bigserial primary key,
      merchant_id uuid not null references merchants(id),
      is_sandbox boolean not null,
      method text not null,
      path text not null,
      key text not null,
      fingerprint text not null,
      response_status integer,
      response_body jsonb,
      created_at timestamptz not null,
      unique (merchant_id, is_sandbox, method, path, key)
    );
    create index idempotency_keys_created on idempotency_keys (created_at);

    create table events (
      id text primary key,
      seq bigserial not null unique,
      merchant_id uuid not null references merchants(id),
      is_sandbox boolean not null,
      type text not null,
      resource_type text not null,
      resource_id text not null,
      payload jsonb not null,
      created_at timestamptz not null
    );
    create index events_merchant_created on events (merchant_id, is_sandbox, created_at desc, id desc);
    create index events_resource on events (resource_id, seq);

    create table admin_audit_log (
      id uuid primary key,
      actor_user_id text not null,
      actor_role text not null,
      action text not null,
      target_type text not null,
      target_id text not null,
      details jsonb not null,
      created_at timestamptz not null
    );
    create index admin_audit_log_target on admin_audit_log (target_type, target_id, created_at);
  `,
  );
}
