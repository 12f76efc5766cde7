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
import type { MerchantTables } from '../modules/merchants/tables.ts';
import type { EventTables } from '../modules/events/tables.ts';
import type { RefundTables } from '../modules/refunds/tables.ts';
import type { SlipTables } from '../modules/validators/tables.ts';
import type { PaymentLinkTables } from '../modules/payment-links/tables.ts';
import type { ReceiptTables } from '../modules/receipts/tables.ts';

/** JSON columns: written as a string or object, read back parsed. */
export type Json<T = unknown> = ColumnType<T, string | T, string | T>;

/** The platform's tables (src/db: settings; src/http: idempotency_keys). */
export interface CoreTables {
  settings: { key: string; value: string };
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
  /** Failed-authentication buckets and sign-in windows shared by the api processes (src/http/auth-counters.ts). */
  auth_counters: { key: string; value: number; at: Date };
}

/** The whole schema: each feature module declares its own tables and adds them here. */
export interface Database
  extends CoreTables,
    PaymentTables,
    PaymentLinkTables,
    ReceiptTables,
    SettlementTables,
    FxTables,
    WebhookTables,
    LedgerTables,
    PendingFundsTables,
    BalanceTables,
    SellOrderTables,
    BuyOrderTables,
    DisputeTables,
    DashboardTables,
    LiquidityTables,
    ReferenceTables,
    AuditTables,
    ArchiveTables,
    MerchantTables,
    EventTables,
    RefundTables,
    SlipTables {}
