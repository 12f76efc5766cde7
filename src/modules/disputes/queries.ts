import type { Db, Executor } from '../../db/database.ts';
import { OWNERSHIP, ownedBy } from '../../http/ownership.ts';
import { listPage } from '../../http/pagination.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { notFound } from '../../lib/errors.ts';
import { presentDispute, presentEvent } from './present.ts';
import type { DisputeEventView } from './schema.ts';
import type { DisputesDeps } from './service.ts';
import type { DisputeKind, DisputeRow, DisputeStatus } from './tables.ts';

/** The read side of disputes: one dispute with its event log, and cursor-paged lists for merchants and operators. */

export async function loadEvents(executor: Executor, dispute_id: string): Promise<DisputeEventView[]> {
  const rows = await executor
    .selectFrom('dispute_events')
    .selectAll()
    .where('dispute_id', '=', dispute_id)
    .orderBy('seq')
    .execute();
  return rows.map(presentEvent);
}

/** A dispute is its seller's (`merchant_id`, the sell order's owner) and, when a buyer opened it, that buyer's too. */
const partyOf = (dispute: DisputeRow, scope: MerchantScope) =>
  dispute.opened_by_merchant_id === scope.merchant_id ? scope.merchant_id : dispute.merchant_id;

export async function getMerchantDispute(deps: Pick<DisputesDeps, 'db'>, scope: MerchantScope, id: string) {
  const dispute = ownedBy(
    await deps.db.selectFrom('disputes').selectAll().where('id', '=', id).executeTakeFirst(),
    (row) => partyOf(row, scope),
    scope,
    OWNERSHIP.dispute,
  );
  return { ...presentDispute(dispute), events: await loadEvents(deps.db, id) };
}

/**
 * The opener's evidence on a dispute the caller may read (what the dashboard's dispute page shows): its type and when
 * it came, or null when none was attached.
 */
export async function disputeEvidenceOf(
  deps: Pick<DisputesDeps, 'db'>,
  dispute_id: string,
): Promise<{ content_type: string; created_at: Date } | null> {
  const row = await deps.db
    .selectFrom('dispute_evidence')
    .select(['content_type', 'created_at'])
    .where('dispute_id', '=', dispute_id)
    .executeTakeFirst();
  return row ?? null;
}

export interface ListDisputesQuery {
  status?: DisputeStatus[] | undefined;
  kind?: DisputeKind[] | undefined;
  sell_order_id?: string | undefined;
  merchant_id?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

async function list(db: Db, scope: MerchantScope | null, query: ListDisputesQuery) {
  let select = db.selectFrom('disputes').selectAll();
  if (scope)
    select = select
      .where((eb) =>
        eb.or([eb('merchant_id', '=', scope.merchant_id), eb('opened_by_merchant_id', '=', scope.merchant_id)]),
      )
      .where('is_sandbox', '=', scope.is_sandbox);
  if (query.merchant_id) select = select.where('merchant_id', '=', query.merchant_id);
  if (query.status?.length) select = select.where('status', 'in', query.status);
  if (query.kind?.length) select = select.where('kind', 'in', query.kind);
  if (query.sell_order_id) select = select.where('sell_order_id', '=', query.sell_order_id);
  return listPage(select, query, presentDispute);
}

export const listMerchantDisputes = (deps: Pick<DisputesDeps, 'db'>, scope: MerchantScope, query: ListDisputesQuery) =>
  list(deps.db, scope, query);
export const listAllDisputes = (deps: Pick<DisputesDeps, 'db'>, query: ListDisputesQuery) => list(deps.db, null, query);

export async function getDisputeForAdmin(deps: Pick<DisputesDeps, 'db'>, id: string) {
  const dispute = await deps.db.selectFrom('disputes').selectAll().where('id', '=', id).executeTakeFirst();
  if (!dispute) throw notFound('Dispute');
  return { ...presentDispute(dispute), events: await loadEvents(deps.db, id) };
}
