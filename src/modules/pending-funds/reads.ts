import { BatchedRead, perDatabase } from '../../db/batched-read.ts';
import type { Db } from '../../db/database.ts';
import { ofMerchant, OWNERSHIP, ownedBy, type OwnershipRule } from '../../http/ownership.ts';
import { listPage } from '../../http/pagination.ts';
import type { MerchantScope } from '../../http/principal.ts';
import type { PendingFundsDeps } from './deps.ts';
import { presentPendingFunds, type PendingFundsView } from './present.ts';
import { AWAITING_RECEIVER } from './state.ts';
import type { PendingFundsRow, PendingFundsStatus } from './tables.ts';

/** One reader of rows by id per database: the reads of concurrent requests share one statement. */
const rowReader = perDatabase(
  (db) =>
    new BatchedRead(
      (ids: string[]) => db.selectFrom('pending_funds').selectAll().where('id', 'in', ids).execute(),
      (row: PendingFundsRow) => row.id,
    ),
);

/** The caller's own row by the one ownership rule: a read of another merchant's row is 404, a confirm 403 (contract 4.3). */
export async function loadForReceiver(
  deps: Pick<PendingFundsDeps, 'db'>,
  scope: MerchantScope,
  id: string,
  rule: OwnershipRule,
): Promise<PendingFundsRow> {
  const row = await rowReader(deps.db).read(id);
  return ownedBy(row, (found) => found.receiver_merchant_id, scope, rule);
}

export async function getPendingFunds(
  deps: Pick<PendingFundsDeps, 'db'>,
  scope: MerchantScope,
  id: string,
): Promise<PendingFundsView> {
  const row = await loadForReceiver(deps, scope, id, OWNERSHIP.pending_funds);
  return presentPendingFunds(row);
}

export async function listPendingFunds(
  deps: Pick<PendingFundsDeps, 'db'>,
  scope: MerchantScope,
  query: { status?: PendingFundsStatus[] | undefined; cursor?: string | undefined; limit: number },
) {
  let builder = deps.db.selectFrom('pending_funds').selectAll().where(ofMerchant(scope, 'receiver_merchant_id'));
  if (query.status?.length) builder = builder.where('status', 'in', query.status);
  return listPage(builder, query, presentPendingFunds);
}

/** Sum of a merchant's rows awaiting receiver confirmation: the balance's net obligation. */
export async function netObligationMicroPay(db: Db, merchant_id: string, is_sandbox: boolean): Promise<number> {
  const row = await db
    .selectFrom('pending_funds')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('amount_minor'), eb.val('0')).as('total'))
    .where(ofMerchant({ merchant_id, is_sandbox }, 'receiver_merchant_id'))
    .where('status', '=', AWAITING_RECEIVER)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}
