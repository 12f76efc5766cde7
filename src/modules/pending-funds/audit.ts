import { randomUUID } from 'node:crypto';
import type { Db, Trx } from '../../db/database.ts';
import { listPage } from '../../http/pagination.ts';
import { notFound } from '../../lib/errors.ts';
import type { ValidatorVerdict } from '../validators/port.ts';
import { presentAudit, presentAuditFull } from './present.ts';
import type { PendingFundsRow } from './tables.ts';

export interface AuditEntry {
  row: PendingFundsRow;
  stage: 'intake' | 'receiver_confirm';
  verdict: ValidatorVerdict;
  receipt_sha256: string;
  content_type: string;
  status_after: string;
  applied: boolean;
  actor_merchant_id: string | null;
}

/** Writes one append-only audit row: a validator verdict on a row's receipt, at intake or at a receiver-confirm. */
export async function writeAudit(trx: Trx, at: Date, entry: AuditEntry): Promise<string> {
  return (await writeAudits(trx, at, [entry]))[0] as string;
}

/** Writes several audit rows in one statement (the batched receiver-confirm's); answers their ids, in order. */
export async function writeAudits(trx: Trx, at: Date, entries: readonly AuditEntry[]): Promise<string[]> {
  if (entries.length === 0) return [];
  const rows = entries.map((entry) => ({
    id: randomUUID(),
    pending_funds_id: entry.row.id,
    stage: entry.stage,
    outcome: entry.verdict.outcome,
    validator_kind: entry.verdict.validator_kind,
    validator_response: JSON.stringify(entry.verdict.response),
    failure_reason: entry.verdict.reason ?? null,
    observed_amount_minor: entry.verdict.observed_amount_minor ?? null,
    provider_reference: entry.verdict.reference ?? null,
    receipt_sha256: entry.receipt_sha256,
    content_type: entry.content_type,
    status_before: entry.row.status,
    status_after: entry.status_after,
    applied: entry.applied,
    actor_merchant_id: entry.actor_merchant_id,
    created_at: at,
  }));
  await trx.insertInto('receiver_confirm_audit').values(rows).execute();
  return rows.map((row) => row.id);
}

export interface AuditQuery {
  outcome?: string[] | undefined;
  pending_funds_id?: string | undefined;
  validator_kind?: string | undefined;
  stage?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

type AuditTable = 'receiver_confirm_audit' | 'receiver_confirm_audit_archive';

/** Newest first; with `include_archived`, the rows the audit-archival job copied to the archive too. */
export async function listAudit(db: Db, query: AuditQuery & { include_archived?: boolean | undefined }) {
  const from = (table: AuditTable) => {
    // The archive has the same columns plus archived_at, which selectAll() returns too (presentAudit shows it).
    let builder = db.selectFrom(table as 'receiver_confirm_audit').selectAll();
    // An archived row stays in its table beside its archive copy: it is listed once, from the archive.
    if (table === 'receiver_confirm_audit') {
      builder = builder.where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('receiver_confirm_audit_archive as copy')
              .select('copy.id')
              .whereRef('copy.id', '=', 'receiver_confirm_audit.id'),
          ),
        ),
      );
    }
    if (query.outcome?.length) builder = builder.where('outcome', 'in', query.outcome as ValidatorVerdict['outcome'][]);
    if (query.pending_funds_id) builder = builder.where('pending_funds_id', '=', query.pending_funds_id);
    if (query.validator_kind)
      builder = builder.where('validator_kind', '=', query.validator_kind as ValidatorVerdict['validator_kind']);
    // Receiver-confirm rows unless asked otherwise: rows per pending_funds_id then equal receiver-confirm calls.
    const stage = query.stage ?? 'receiver_confirm';
    if (stage !== 'all') builder = builder.where('stage', '=', stage as 'intake' | 'receiver_confirm');
    return builder;
  };
  return listPage(
    query.include_archived
      ? [from('receiver_confirm_audit'), from('receiver_confirm_audit_archive')]
      : from('receiver_confirm_audit'),
    query,
    presentAudit,
  );
}

/** A row by id, archived or not (an archived one is its archive copy, with `archived: true`); `include_archived` is accepted as before. */
export async function getAudit(db: Db, id: string, _include_archived = false) {
  const row =
    (await db.selectFrom('receiver_confirm_audit_archive').selectAll().where('id', '=', id).executeTakeFirst()) ??
    (await db.selectFrom('receiver_confirm_audit').selectAll().where('id', '=', id).executeTakeFirst());
  if (!row) throw notFound('Audit row');
  return presentAuditFull(row);
}
