import type { Generated } from 'kysely';
import type { Json } from '../../db/schema.ts';

/** The outbox (append-only). Its insert trigger `events_enqueue_webhook_delivery` writes the webhooks module's deliveries. */
export interface EventTables {
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
