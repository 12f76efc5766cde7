import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { DatabaseHandle, Db, Trx } from '../../db/database.ts';
import { GroupCommit } from '../../lib/group-commit.ts';

/** NOTIFY channel the webhook dispatcher listens on; the payload carries no meaning (a wake-up). */
export const EVENTS_CHANNEL = 'mpay_events';

/** Wakes every dispatcher (all processes): one NOTIFY of its own, outside any business transaction. */
export async function wakeDispatchers(db: Db): Promise<void> {
  await sql`select pg_notify(${EVENTS_CHANNEL}, '')`.execute(db);
}

/**
 * Wakes the dispatchers after events commit, never inside the business transaction: PostgreSQL serialises the
 * commits of every transaction that queued a NOTIFY behind one database-wide lock (held across the WAL flush), which
 * would cap payment creation. The commits of one turn share one NOTIFY, and those while it is in flight share the
 * next (a GroupCommit of one in flight). A NOTIFY lost to a crash between commit and send is covered by the
 * dispatcher's short poll. Returns the stop function.
 */
export function wakeDispatchersAfterEventCommits(
  db: Db,
  commits: DatabaseHandle['commits'],
  onError: (error: unknown) => void,
): () => void {
  let stopped = false;
  const wake = new GroupCommit<null, null>(
    async (commits_seen) => {
      if (!stopped) await wakeDispatchers(db).catch(onError);
      return commits_seen;
    },
    { max_in_flight: 1, max_batch: Number.MAX_SAFE_INTEGER },
  );
  // a commit whose events were all written by a statement that notified itself (the batched create) needs no other
  const unsubscribe = commits.on('events', ({ notified }) => {
    if (!stopped && !notified) void wake.submit(null);
  });
  return () => {
    stopped = true;
    unsubscribe();
  };
}

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

/** The fields of an event that name its subject: one merchant's row, in its mode. */
export function eventAbout(
  resource_type: string,
  row: { id: string; merchant_id: string; is_sandbox: boolean },
): Pick<NewEvent, 'merchant_id' | 'is_sandbox' | 'resource_type' | 'resource_id'> {
  return { merchant_id: row.merchant_id, is_sandbox: row.is_sandbox, resource_type, resource_id: row.id };
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
 * change it describes commits. The envelope carries both integration styles the contract shows. No NOTIFY here:
 * the commit itself wakes the dispatchers (wakeDispatchersAfterEventCommits).
 */
export async function recordEvent(trx: Trx, at: Date, event: NewEvent): Promise<EventEnvelope> {
  return (await recordEvents(trx, at, [event]))[0]!;
}

/** Writes several events in one statement (in this order), as recordEvent does one. */
export async function recordEvents(trx: Trx, at: Date, events: readonly NewEvent[]): Promise<EventEnvelope[]> {
  if (events.length === 0) return [];
  const { rows, envelopes } = eventRows(at, events);
  await trx
    .insertInto('events')
    .values(rows.map((row) => ({ ...row, payload: JSON.stringify(row.payload) })))
    .execute();
  return envelopes;
}

/** The outbox rows of `events` (in this order) and their envelopes, for recordEvents or the batched payment create's one call. */
export function eventRows(
  at: Date,
  events: readonly NewEvent[],
): { rows: EventRowValues[]; envelopes: EventEnvelope[] } {
  const envelopes = events.map((event): EventEnvelope => {
    const id = `evt_${randomUUID().replace(/-/g, '')}`;
    return {
      ...event.flat,
      id,
      event: event.type,
      type: event.type,
      idempotency_key: id,
      timestamp: at.toISOString(),
      ...(event.is_sandbox ? { sandbox: true as const } : {}),
      data: event.data,
    };
  });
  const rows = events.map((event, index) => ({
    id: envelopes[index]!.id,
    merchant_id: event.merchant_id,
    is_sandbox: event.is_sandbox,
    type: event.type,
    resource_type: event.resource_type,
    resource_id: event.resource_id,
    payload: envelopes[index]!,
    created_at: at,
  }));
  return { rows, envelopes };
}

export interface EventRowValues {
  id: string;
  merchant_id: string;
  is_sandbox: boolean;
  type: string;
  resource_type: string;
  resource_id: string;
  payload: EventEnvelope;
  created_at: Date;
}
