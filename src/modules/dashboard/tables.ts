import type { ColumnType, Generated } from 'kysely';

export type DashboardRole = 'owner' | 'developer' | 'finance' | 'viewer';

type Nullable<T> = ColumnType<T | null, T | null | undefined, T | null>;

export interface DashboardTables {
  merchant_users: {
    id: string;
    merchant_id: string;
    email: string;
    role: DashboardRole;
    password_hash: Nullable<string>;
    password_changed_at: Nullable<Date>;
    invitation_token_hash: Nullable<string>;
    invitation_expires_at: Nullable<Date>;
    failed_attempts: Generated<number>;
    first_failed_at: Nullable<Date>;
    locked_until: Nullable<Date>;
    created_at: Date;
    /** Removed from the merchant by an owner: no sign-in, no session. */
    removed_at: Nullable<Date>;
  };
  dashboard_settings: {
    merchant_id: string;
    /** An IANA zone (`Asia/Bangkok`): the zone every time on the merchant's pages is shown in. */
    time_zone: string;
    updated_at: Date;
  };
  api_request_log: {
    id: string;
    merchant_id: string;
    api_key_id: string;
    is_sandbox: boolean;
    method: string;
    /** Without the query string. */
    path: string;
    status: number;
    duration_ms: number;
    request_id: string;
    created_at: Date;
  };
}
