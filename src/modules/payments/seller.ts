import type { Db } from '../../db/database.ts';
import { listPage, type PageQuery } from '../../http/pagination.ts';
import { notFound } from '../../lib/errors.ts';
import { presentSellerLegs } from './legs.ts';
import type { SellerLegView } from './schema.ts';

/**
 * What a seller reads with its own key (DESIGN 3b): its live legs that carry a slip, newest first, optionally only
 * those in one state (`awaiting_payee`: waiting for its word), and a leg's slip image. Another seller's leg is 404.
 */

export type SellerLegStatus = SellerLegView['status'];

/** Live legs with a slip: one seller's, or every seller's (null: the operator's view, `GET /admin/legs`). */
const sellerLegRows = (db: Db, seller_id: string | null) => {
  const rows = db
    .selectFrom('payment_proofs as proof')
    .innerJoin('payment_legs as leg', (join) =>
      join.onRef('leg.payment_id', '=', 'proof.payment_id').onRef('leg.match_order', '=', 'proof.match_order'),
    )
    .innerJoin('payments', 'payments.id', 'proof.payment_id')
    .select([
      'proof.id',
      'proof.created_at',
      'proof.verdict',
      'proof.verdict_reason',
      'proof.awaiting_payee_at',
      'proof.decided_by',
      'proof.decision_reason',
      'proof.sha256',
      'leg.match_order',
      'leg.seller_id',
      'leg.allocated_fiat_amount',
      'leg.amount_micro_pay',
      'payments.id as payment_id',
      'payments.currency',
      'payments.status as payment_status',
    ])
    .where('payments.is_sandbox', '=', false);
  return seller_id === null ? rows : rows.where('leg.seller_id', '=', seller_id);
};

type SellerLegRow = Awaited<ReturnType<ReturnType<typeof sellerLegRows>['execute']>>[number];

async function present(db: Db, public_base_url: string, rows: readonly SellerLegRow[]): Promise<SellerLegView[]> {
  return presentSellerLegs(
    db,
    public_base_url,
    rows.map((row) => ({
      payment: { id: row.payment_id, currency: row.currency, status: row.payment_status },
      leg: row,
      proof: row,
    })),
  );
}

/**
 * `GET /v1/seller/legs`: the seller's legs with a slip, newest first; `awaiting_payee` names those waiting for it.
 * With no seller (`GET /admin/legs`), every seller's: what an operator may decide for them.
 */
export async function listSellerLegs(
  deps: { db: Db; public_base_url: string },
  seller_id: string | null,
  query: PageQuery & { status?: SellerLegStatus | undefined },
) {
  let select = sellerLegRows(deps.db, seller_id);
  if (query.status === 'awaiting_payee')
    select = select.where('proof.verdict', '=', 'awaiting_payee').where('payments.status', '=', 'confirming');
  else if (query.status === 'verified') select = select.where('proof.verdict', '=', 'verified');
  else if (query.status === 'rejected') select = select.where('proof.verdict', '=', 'failed');
  else if (query.status === 'checking')
    select = select
      .where((eb) => eb.or([eb('proof.verdict', 'is', null), eb('proof.verdict', 'in', ['unverified', 'timeout'])]))
      .where('payments.status', '=', 'confirming');
  else if (query.status === 'not_checked')
    select = select
      .where((eb) => eb.or([eb('proof.verdict', 'is', null), eb('proof.verdict', 'not in', ['verified', 'failed'])]))
      .where('payments.status', '!=', 'confirming');
  const page = await listPage(select, query, (row) => row, { table: 'proof' });
  return { ...page, data: await present(deps.db, deps.public_base_url, page.data) };
}

/** The slip of one of the seller's legs (its bytes and type); another seller's is 404. */
export async function sellerLegSlip(
  db: Db,
  seller_id: string,
  payment_id: string,
  match_order: number,
): Promise<{ content_type: string; data: Uint8Array }> {
  const row = await db
    .selectFrom('payment_proofs as proof')
    .innerJoin('payment_legs as leg', (join) =>
      join.onRef('leg.payment_id', '=', 'proof.payment_id').onRef('leg.match_order', '=', 'proof.match_order'),
    )
    .select(['proof.content_type', 'proof.data', 'proof.is_sandbox'])
    .where('proof.payment_id', '=', payment_id)
    .where('proof.match_order', '=', match_order)
    .where('leg.seller_id', '=', seller_id)
    .executeTakeFirst();
  if (!row || row.is_sandbox) throw notFound('Leg');
  return { content_type: row.content_type, data: row.data };
}
