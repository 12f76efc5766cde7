import type { ColumnType, Generated } from 'kysely';
import type { PaymentTables } from '../modules/payments/tables.ts';
import type { LedgerTables } from '../modules/ledger/tables.ts';
import type { PendingFundsTables } from '../modules/pending-funds/tables.ts';
import type { BalanceTables } from '../modules/balance/tables.ts';
import type { WebhookTables } from '../modules/webhooks/tables.ts';
import type { SettlementTables } from '../modules/settlements/tables.ts';
import type { FxTables } from '../modules/fx/tables.ts';
import type { SellOrderTables } from '../modules/sell-orders/tables.ts';
import type { BuyOrderTables } from '../modules/buy-orders/tables.ts';
import type { DisputeTables } from '../modules/disputes/tables.ts';
import type { DashboardTables } from '../modules/dashboard/tables.ts';
import type { LiquidityTables } from '../modules/liquidity/tables.ts';
import type { ReferenceTables } from '../modules/reference/tables.ts';
import type { AuditTables } from '../modules/audit/tables.ts';
import type { ArchiveTables } from '../modules/archival/tables.ts';

/** JSON columns: written as a string or object, read back parsed. */
export type Json<T = unknown> = ColumnType<T, string | T, string | T>;

export interface CoreTables {
  settings: { key: string; value: string };
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
  idempotency_keys: {
    id: Generated<number>;
    merchant_id: string;
    is_sandbox: boolean;
    method: string;
    path: string;
    key: string;
    fingerprint: string;
    response_status: number | null;
    response_body: Json | null;
    created_at: Date;
  };
  events: {
    id: string;
    seq: Generated<number>;
    merchant_id: string;
    is_sandbox: boolean;
    type: string;
    resource_type: string;
    resource_id: string;
    payload: Json<Record<string, unknown>>;
    created_at: Date;
  };
}

/** The whole schema: each feature module declares its own tables and adds them here. */
export interface Database extends CoreTables, PaymentTables, SettlementTables, FxTables, WebhookTables, LedgerTables, PendingFundsTables, BalanceTables, SellOrderTables, BuyOrderTables, DisputeTables, DashboardTables, LiquidityTables, ReferenceTables, AuditTables, ArchiveTables {}
