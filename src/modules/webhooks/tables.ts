import type { ColumnType, Selectable } from 'kysely';
import type { Json } from '../../db/schema.ts';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'skipped';

/**
 * The webhook tables (migrations 0040, 0100). Rows of `webhook_deliveries` are written by no code in this module on
 * the way in: the trigger `events_enqueue_webhook_delivery` (webhooks/sql/mpay_enqueue_webhook_delivery.sql)
 * inserts them in the transaction that inserts the event (outbox), one per enabled endpoint of the event's merchant
 * and mode subscribed to its type, or one `skipped` row with `endpoint_id` null when none is. The dispatcher then
 * claims and sends them; redeliver and recover re-queue them.
 */
export interface WebhookTables {
  webhook_endpoints: {
    id: string;
    /** Null on a seller's endpoint (migration 0341): an endpoint has one owner, a merchant or a seller. */
    merchant_id: string | null;
    seller_id: ColumnType<string | null, string | null | undefined, string | null>;
    is_sandbox: boolean;
    url: string;
    description: string | null;
    /** Event types, or ['*'] for all. */
    enabled_events: Json<string[]>;
    disabled: boolean;
    /** The endpoint `PUT /v1/webhook-endpoint` sets: at most one per merchant and mode. */
    is_default: boolean;
    /** Sealed with secret-box.ts (AES-256-GCM, the row id as AAD). */
    secret_sealed: string;
    previous_secret_sealed: string | null;
    previous_secret_expires_at: Date | null;
    created_at: Date;
    updated_at: Date;
    deleted_at: Date | null;
    /** Set by a failed attempt, cleared by a successful one: the dispatcher gives a failing endpoint less. */
    failing_since: ColumnType<Date | null, Date | null | undefined, Date | null>;
  };
  webhook_deliveries: {
    id: string;
    event_id: string;
    event_seq: number;
    merchant_id: string;
    is_sandbox: boolean;
    /** Set on a delivery to a seller's endpoint: the seller's, never listed or redelivered for the merchant. */
    seller_id: ColumnType<string | null, string | null | undefined, string | null>;
    /** Null only on a `skipped` row: no endpoint was subscribed when the event was written. */
    endpoint_id: string | null;
    resource_id: string;
    ordering_key: string;
    status: DeliveryStatus;
    attempt_count: number;
    retry_count: number;
    next_attempt_at: Date;
    claim_token: string | null;
    claimed_until: Date | null;
    last_attempt_at: Date | null;
    last_status_code: number | null;
    last_error: string | null;
    delivered_at: Date | null;
    created_at: Date;
  };
  webhook_attempts: {
    id: string;
    delivery_id: string;
    attempt_number: number;
    url: string;
    status_code: number | null;
    error: string | null;
    duration_ms: number;
    response_excerpt: string | null;
    succeeded: boolean;
    started_at: Date;
  };
}

export type DeliveryRow = Selectable<WebhookTables['webhook_deliveries']>;
export type AttemptRow = Selectable<WebhookTables['webhook_attempts']>;
export type EndpointRow = Selectable<WebhookTables['webhook_endpoints']>;
