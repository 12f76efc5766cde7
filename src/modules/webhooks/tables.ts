import type { Selectable } from 'kysely';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'skipped';

export interface WebhookTables {
  webhook_deliveries: {
    id: string;
    event_id: string;
    event_seq: number;
    merchant_id: string;
    is_sandbox: boolean;
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
