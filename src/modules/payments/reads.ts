import { sql } from 'kysely';
import { BatchedRead, perDatabase } from '../../db/batched-read.ts';
import { preparedQuery } from '../../db/prepared.ts';
import { CredentialEpochMoved } from '../../http/auth.ts';
import { ofMerchant, OWNERSHIP, owned } from '../../http/ownership.ts';
import { listPage, toPage } from '../../http/pagination.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { notFound } from '../../lib/errors.ts';
import { GroupCommit } from '../../lib/group-commit.ts';
import type { PaymentsDeps } from './deps.ts';
import { legsWithProofs, loadLegs } from './legs.ts';
import { expireIfDue, passDeadline } from './lifecycle.ts';
import {
  legProof,
  presentPayment,
  PRESENTED_COLUMNS,
  type PaymentView,
  type PresentedLeg,
  type PresentedPayment,
} from './present.ts';
import { isDue, relockPayment } from './state.ts';
import type { LegRow, PaymentRow, PaymentStatus } from './tables.ts';

/** The payment's legs with their slips as one JSON array column (rate as text: a JSON number would lose numeric digits). */
const legsJson = sql<StoredLeg[] | string>`coalesce((
  select json_agg(json_build_object('payment_id', l.payment_id, 'match_order', l.match_order, 'seller_id', l.seller_id,
    'allocated_fiat_amount', l.allocated_fiat_amount, 'rate', l.rate::text, 'amount_micro_pay', l.amount_micro_pay, 'reserved_minor', l.reserved_minor,
    'proof', (select json_build_object('id', p.id, 'verdict', p.verdict, 'verdict_reason', p.verdict_reason, 'created_at', p.created_at)
              from payment_proofs p where p.payment_id = l.payment_id and p.match_order = l.match_order))
    order by l.match_order)
  from payment_legs l where l.payment_id = payments.id), '[]')`;

type StoredLeg = LegRow & {
  proof: { id: string; verdict: string | null; verdict_reason: string | null; created_at: string } | null;
};

/** `credential_epoch`: read in the same snapshot as the row (auth.ts withCarriedEpoch). */
type PaymentWithLegs = PresentedPayment & { legs: StoredLeg[] | string; credential_epoch: number | string };

/**
 * The read by id with its legs: the hot read, prepared (db/prepared.ts), for many ids at once. Named columns, not `*`:
 * a column added by a migration under a live connection then leaves the prepared statement's result type as it was.
 */
const paymentsWithLegs = preparedQuery<PaymentWithLegs, [ids: string[]]>((db) =>
  db
    .selectFrom('payments')
    .select(PRESENTED_COLUMNS)
    .select(legsJson.as('legs'))
    .select(credentialEpoch)
    .where(sql<boolean>`payments.id = any(${[] as string[]}::text[])`),
);

/** Concurrent reads by id coalesce into one statement per database handle (db/batched-read.ts). */
const paymentReader = perDatabase(
  (db) =>
    new BatchedRead(
      (ids: string[]) => paymentsWithLegs(db, ids),
      (row: PaymentWithLegs) => row.id,
    ),
);

function parseLegs(value: StoredLeg[] | string, payment_status: string): PresentedLeg[] {
  const legs = typeof value === 'string' ? (JSON.parse(value) as StoredLeg[]) : value;
  return legs.map((leg) => ({
    ...leg,
    allocated_fiat_amount: Number(leg.allocated_fiat_amount),
    amount_micro_pay: Number(leg.amount_micro_pay),
    proof: leg.proof ? legProof(leg.proof, payment_status) : null,
  }));
}

/** A timestamp as the view shows it, formatted by the database (no parse and format again per row). */
const isoText = (column: 'expires_at' | 'created_at' | 'matched_at' | 'completed_at') =>
  sql<string>`to_char(${sql.ref(`payments.${column}`)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`.as(column);

/** The list's columns: the presented ones, timestamps as ISO text (a list shows 25 rows of four each). */
const LISTED_COLUMNS = [
  ...PRESENTED_COLUMNS.filter(
    (column) =>
      column !== 'expires_at' && column !== 'created_at' && column !== 'matched_at' && column !== 'completed_at',
  ),
  isoText('expires_at'),
  isoText('created_at'),
  isoText('matched_at'),
  isoText('completed_at'),
] as const;

const credentialEpoch = sql<number | string>`(select epoch from credential_epoch)`.as('credential_epoch');

type ListedPayment = Omit<PresentedPayment, 'expires_at' | 'created_at' | 'matched_at' | 'completed_at'> & {
  expires_at: string;
  created_at: string;
  matched_at: string | null;
  completed_at: string | null;
  legs: StoredLeg[] | string;
  credential_epoch: number | string;
};

/**
 * The first page of a merchant's payments in one mode, unfiltered, newest first: the list's hot read, prepared
 * (db/prepared.ts). Any filter, a cursor or an offset goes through the built query instead.
 */
const firstPage = preparedQuery<ListedPayment, [merchant_id: string, is_sandbox: boolean, limit: number]>((db) =>
  db
    .selectFrom('payments')
    .select(LISTED_COLUMNS)
    .select(legsJson.as('legs'))
    .select(credentialEpoch)
    .where('payments.merchant_id', '=', '')
    .where('payments.is_sandbox', '=', false)
    .orderBy('payments.created_at', 'desc')
    .orderBy('payments.id', 'desc')
    .limit(0),
);

/**
 * Concurrent unfiltered first pages of one merchant, mode and size share one statement, by the reads by id's rule
 * (a `GroupCommit`): the lists asked for while earlier ones are in flight (at most 2 batches at once) or in the same
 * turn go together, so each still sees everything committed before it arrived. Each request presents the rows itself.
 */
const firstPageReader = perDatabase(
  (db) =>
    new GroupCommit<string, ListedPayment[]>(
      async (keys) => {
        const pages = new Map<string, Promise<ListedPayment[]>>();
        for (const key of keys)
          if (!pages.has(key)) {
            const [merchant_id, mode, rows] = key.split('/');
            pages.set(key, firstPage(db, merchant_id!, mode === 'sandbox', Number(rows)));
          }
        return Promise.all(keys.map((key) => pages.get(key)!));
      },
      { max_batch: 256, max_in_flight: 2 },
    ),
);

/**
 * Reads a payment; a matched or payment_pending one past `expires_at` becomes `expired` on the way (lazy expiry). When
 * nothing expires, one statement shared with every read by id in flight beside it (batched by id). `epoch`: the
 * credential epoch the request's cached credential was read under (auth.ts withCarriedEpoch), which the statement
 * must have seen beside the row; a statement that found no row saw no epoch, so a missing row is checked again.
 */
export async function getPayment(
  deps: PaymentsDeps,
  scope: MerchantScope,
  id: string,
  epoch?: number,
): Promise<PaymentView> {
  const row = await paymentReader(deps.db).read(id);
  if (epoch !== undefined && (row === undefined || Number(row.credential_epoch) !== epoch))
    throw new CredentialEpochMoved();
  const now = deps.clock.now();
  // The row is presented as it is (presentPayment picks its fields): no copy without `legs`.
  const payment = owned(row, scope, OWNERSHIP.payment);
  if (isDue(payment, now) || (payment.status === 'confirming' && payment.expires_at.getTime() <= now.getTime())) {
    return deps.db.transaction().execute(async (trx) => {
      const current = await passDeadline(deps, trx, await relockPayment(trx, id), now);
      return presentPayment(current, await legsWithProofs(trx, current, await loadLegs(trx, id)), deps.public_base_url);
    });
  }
  return presentPayment(payment, parseLegs(payment.legs, payment.status), deps.public_base_url);
}

export interface ListPaymentsQuery {
  status?: PaymentStatus[] | undefined;
  order_id?: string | undefined;
  payment_link_id?: string | undefined;
  /** Order ids that start with this text (the dashboard's search). */
  order_id_prefix?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  cursor?: string | undefined;
  limit: number;
  offset?: number | undefined;
}

/**
 * A page of the merchant's payments in one mode, newest first. `epoch`: the credential epoch the request's credential
 * was verified under (auth.ts withCarriedEpoch), which the list's statement must have seen beside its rows; an empty
 * page saw none, so it is checked again.
 */
export async function listPayments(deps: PaymentsDeps, scope: MerchantScope, query: ListPaymentsQuery, epoch?: number) {
  let seen: number | undefined;
  const present = (row: ListedPayment) => {
    seen ??= Number(row.credential_epoch);
    // the row is presented as it is (presentPayment picks its fields): no copy without `legs`
    return presentPayment(row, parseLegs(row.legs, row.status), deps.public_base_url);
  };
  const checked = <Page>(page: Page): Page => {
    if (epoch !== undefined && seen !== epoch) throw new CredentialEpochMoved();
    return page;
  };
  const unfiltered =
    !query.status?.length &&
    query.order_id === undefined &&
    query.payment_link_id === undefined &&
    !query.order_id_prefix &&
    !query.from &&
    !query.to &&
    query.cursor === undefined &&
    !query.offset;
  if (unfiltered)
    return checked(
      toPage(
        await firstPageReader(deps.db).submit(
          `${scope.merchant_id}/${scope.is_sandbox ? 'sandbox' : 'live'}/${query.limit + 1}`,
        ),
        query.limit,
        present,
        listedPosition,
      ),
    );
  let select = deps.db
    .selectFrom('payments')
    .select(LISTED_COLUMNS)
    .select(legsJson.as('legs'))
    .select(credentialEpoch)
    .where(ofMerchant(scope, 'payments.merchant_id'));
  if (query.status?.length) select = select.where('payments.status', 'in', query.status);
  if (query.order_id !== undefined) select = select.where('payments.order_id', '=', query.order_id);
  if (query.payment_link_id !== undefined)
    select = select.where('payments.payment_link_id', '=', query.payment_link_id);
  if (query.order_id_prefix)
    select = select.where(
      'payments.order_id',
      'like',
      `${query.order_id_prefix.replace(/[\\%_]/g, (char) => `\\${char}`)}%`,
    );
  if (query.from) select = select.where('payments.created_at', '>=', new Date(query.from));
  if (query.to) select = select.where('payments.created_at', '<', new Date(query.to));
  // The deprecated offset pages only without a cursor.
  if (query.cursor === undefined && query.offset) select = select.offset(query.offset);
  return checked(
    await listPage(select, query, present, {
      created_at: 'payments.created_at',
      id: 'payments.id',
      id_format: 'payment_id',
      positionOf: listedPosition,
    }),
  );
}

/** A listed row's cursor position (its created_at selected as ISO text). */
const listedPosition = (row: ListedPayment) => ({ created_at: new Date(row.created_at), id: row.id });

/** Reads a payment by id alone: the public checkout and QR routes, where the unguessable id is the credential. */
export async function findPaymentById(
  deps: PaymentsDeps,
  id: string,
): Promise<{ payment: PaymentRow; legs: LegRow[] }> {
  const now = deps.clock.now();
  let payment = await deps.db.selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirst();
  if (!payment) throw notFound('Payment');
  if (isDue(payment, now)) {
    payment = await deps.db
      .transaction()
      .execute(async (trx) => expireIfDue(deps, trx, await relockPayment(trx, id), now));
  }
  return { payment, legs: await loadLegs(deps.db, id) };
}

/** The payment a receipt token names, with its legs: the public receipt page, where the unguessable token is the credential. */
export async function findPaymentByReceiptToken(
  deps: Pick<PaymentsDeps, 'db'>,
  token: string,
): Promise<{ payment: PaymentRow; legs: LegRow[] } | undefined> {
  const payment = await deps.db
    .selectFrom('payments')
    .selectAll()
    .where('receipt_token', '=', token)
    .executeTakeFirst();
  return payment ? { payment, legs: await loadLegs(deps.db, payment.id) } : undefined;
}
