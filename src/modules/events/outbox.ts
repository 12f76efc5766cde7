import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Trx } from '../../db/database.ts';

/** NOTIFY channel the webhook dispatcher listens on; the payload is the event id. */
export const EVENTS_CHANNEL = 'mpay_events';

export interface NewEvent {
  merchant_id: string;
  is_sandbox: boolean;
  type: string;
  resource_type: string;
  resource_id: string;
  /** The resource as the API shows it. */
  data: Record<string, unknown>;
  /** Top-level fields beside `data` (the contract's flat payment fields). */
  flat?: Record<string, unknown>;
}

export interface EventEnvelope {
  id: string;
  event: string;
  type: string;
  idempotency_key: string;
  timestamp: string;
  sandbox?: true;
  data: Record<string, unknown>;
  [flat: string]: unknown;
}

/**
 * Writes an event to the outbox inside the caller's transaction, so the event exists exactly when the state
 * change it describes commits. The envelope carries both integration styles the contract shows.
 */
export async function recordEvent(trx: Trx, at: Date, event: NewEvent): Promise<EventEnvelope> {
  const id = `evt_${randomUUID().replace(/-/g, '')}`;
  const envelope: EventEnvelope = {
    ...event.flat,
    id,
    event: event.type,
    type: event.type,
    idempotency_key: id,
    timestamp: at.toISOString(),
    ...(event.is_sandbox ? { sandbox: true as const } : {}),
    data: event.data,
  };
  await trx
    .insertInto('events')
    .values({
      id,
      merchant_id: event.merchant_id,
      is_sandbox: event.is_sandbox,
      type: event.type,
      resource_type: event.resource_type,
      resource_id: event.resource_id,
      payload: JSON.stringify(envelope),
      created_at: at,
    })
    .execute();
  await sql`select pg_notify(${EVENTS_CHANNEL}, ${id})`.execute(trx);
  return envelope;
}
