import type { ColumnType, Generated } from 'kysely';

/** The merchants module's tables: merchants, their API keys and their sessions (admin-opened and dashboard sign-ins). */
export interface MerchantTables {
  merchants: {
    id: string;
    name: string;
    webhook_url: string | null;
    webhook_secret: string | null;
    created_at: Date;
    /** JWTs issued and sessions opened before this instant are refused (token revocation). */
    tokens_not_before: Generated<Date | null>;
  };
  api_keys: {
    id: string;
    merchant_id: string;
    kind: 'live' | 'test' | 'sandbox';
    key_hash: string;
    key_hint: string;
    created_at: Date;
    revoked_at: Date | null;
  };
  merchant_sessions: {
    id: string;
    token_hash: string;
    merchant_id: string;
    user_id: string;
    expires_at: Date;
    created_at: Date;
    is_sandbox: Generated<boolean>;
    /** Dashboard sign-ins (migration 0140): the user, the sliding idle deadline, sign-out. */
    merchant_user_id: ColumnType<string | null, string | null | undefined, string | null>;
    idle_expires_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
    revoked_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  };
  /** One row: moved by every credential change (sql/mpay_credentials_changed.sql); the credential caches read it. */
  credential_epoch: {
    id: Generated<boolean>;
    epoch: number;
  };
}
