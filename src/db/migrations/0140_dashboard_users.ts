import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * Dashboard people: merchant users with a scrypt password hash, a role and a one-time invitation, and
 * the existing `merchant_sessions` extended for them: the user behind the session, the live/sandbox view it shows (`is_sandbox`),
 * a sliding idle deadline beside the absolute `expires_at`, and sign-out. Sessions the admin route opens keep
 * `merchant_user_id` null and no idle deadline, exactly as before. API keys gain a grace period on roll: a rolled
 * key's `revoked_at` lies in the future until then.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table merchant_users (
      id uuid primary key,
      merchant_id uuid not null references merchants(id),
      email text not null unique check (email = lower(email)),
      role text not null check (role in ('owner', 'developer', 'finance', 'viewer')),
      -- scrypt$N$r$p$salt$hash (base64); null until the invitation is accepted.
      password_hash text,
      password_changed_at timestamptz,
      invitation_token_hash text unique,
      invitation_expires_at timestamptz,
      failed_attempts integer not null default 0,
      first_failed_at timestamptz,
      locked_until timestamptz,
      created_at timestamptz not null
    );
    create index merchant_users_merchant on merchant_users (merchant_id);

    alter table merchant_sessions add column merchant_user_id uuid references merchant_users(id);
    -- The session's mode; the same column as the hardening branch's migration 0110 (hence if not exists).
    alter table merchant_sessions add column if not exists is_sandbox boolean not null default false;
    alter table merchant_sessions add column idle_expires_at timestamptz;
    alter table merchant_sessions add column revoked_at timestamptz;
    create index merchant_sessions_user on merchant_sessions (merchant_user_id);
  `,
  );
}
