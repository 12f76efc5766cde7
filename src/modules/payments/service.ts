import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, Trx } from '../../db/database.ts';
import { preparedQuery } from '../../db/prepared.ts';
import type { KeyIdentity } from '../../http/idempotency.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { listPage } from '../../http/pagination.ts';
import type { Clock } from '../../lib/clock.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import { notFound } from '../../lib/errors.ts';
import { OWNERSHIP, owned } from '../../http/ownership.ts';
import { checkProof } from '../validators/receipt.ts';
import { decimalToMinor, METHODS_BY_CURRENCY, type Currency, type PaymentMethod } from '../../lib/money.ts';
import { recordEvent } from '../events/outbox.ts';
import { lockSellersInOrder, releaseLegs } from '../liquidity/service.ts';
import type { PaymentCompletionPort, QuoteLockPort } from './ports.ts';
import {
  legProof,
  paymentEventFields,
  presentPayment,
  PRESENTED_COLUMNS,
  type PaymentView,
  type PresentedLeg,
  type PresentedPayment,
} from './present.ts';
import { CANCELLABLE, isDue, lockPayment, OPEN_FOR_PROOF, transition } from './state.ts';
import type { LegRow, PaymentRow, PaymentStatus } from './tables.ts';
import { present } from '../../lib/assert.ts';
import {
  duplicateOrderId,
  expiredBeforeProof,
  invalidAmount,
  paymentMethodUnsupported,
  paymentNotCancellable,
  proofAllLegsTaken,
  proofDuplicate,
  proofLegTaken,
  proofLegUnknown,
  proofLegWithParts,
  proofNotAccepted,
  proofTooManyParts,
} from './errors.ts';

export type { LegRow, PaymentRow };

export interface PaymentsDeps {
  db: Db;
  clock: Clock;
  public_base_url: string;
  completion: PaymentCompletionPort;
  quote_locks?: QuoteLockPort;
  /** Tells the worker a proof is waiting (in-process wake-up; other processes poll). */
  onProofReceived?: () => void;
  /** The process's batching allocator for creates without a quote lock (absent: every create runs alone). */
  create_batcher?: { create(job: BatchedCreate): Promise<CreateAnswer> };
}

/** What a create answers: the body the route sends, and its status when a batch made it (alone() sets its own). */
export interface CreateAnswer {
  status?: number;
  body: { success: true; data: PaymentView };
}

/** A create request as the batcher takes it (create-batch.ts). */
export interface BatchedCreate {
  scope: MerchantScope;
  input: CreatePaymentInput;
  /** The request's idempotency identity when it carries a key (see idempotencyRequest). */
  idempotency: { identity: KeyIdentity; fingerprint: string } | undefined;
  /** The request on its own (createAlone): a used key, or a batch that refused or failed. */
  alone: () => Promise<CreateAnswer>;
}

export interface CreatePaymentInput {
  order_id: string;
  amount: number | string;
  currency: Currency;
  return_url: string;
  payment_method?: PaymentMethod | undefined;
  expires_in_seconds?: number | undefined;
  metadata?: Record<string, string> | undefined;
  quote_lock_id?: string | undefined;
}

export const DEFAULT_EXPIRES_IN_SECONDS = 900;

export function toMinor(amount: number | string, currency: Currency): number {
  const minor = typeof amount === 'number' ? amount : decimalToMinor(amount, currency);
  if (minor === null || !Number.isSafeInteger(minor) || minor <= 0) {
    throw invalidAmount(currency);
  }
  return minor;
}

export async function loadLegs(executor: Db | Trx, payment_id: string): Promise<LegRow[]> {
  return executor
    .selectFrom('payment_legs')
    .selectAll()
    .where('payment_id', '=', payment_id)
    .orderBy('match_order')
    .execute();
}

/** Statuses in which a payment may hold slips (the others never had an upload). */
const MAY_HOLD_PROOFS: readonly PaymentStatus[] = ['confirming', 'completed', 'failed', 'settled'];

/** The legs with their slips, for a view (no query for a payment that cannot hold any). */
export async function legsWithProofs(
  executor: Db | Trx,
  payment: Pick<PaymentRow, 'id' | 'status'>,
  legs: readonly LegRow[],
): Promise<PresentedLeg[]> {
  if (!MAY_HOLD_PROOFS.includes(payment.status)) return [...legs];
  const proofs = await executor
    .selectFrom('payment_proofs')
    .select(['id', 'match_order', 'verdict', 'verdict_reason', 'created_at'])
    .where('payment_id', '=', payment.id)
    .execute();
  return legs.map((leg) => {
    const proof = proofs.find((candidate) => candidate.match_order === leg.match_order);
    return { ...leg, proof: proof ? legProof(proof) : null };
  });
}

/** Records a payment event in the outbox within `trx`: the resource in `data` and the contract's flat fields. */
export async function emitPaymentEvent(
  trx: Trx,
  at: Date,
  deps: Pick<PaymentsDeps, 'public_base_url'>,
  payment: PaymentRow,
  legs: readonly LegRow[],
  type: string,
): Promise<PaymentView> {
  const view = presentPayment(payment, await legsWithProofs(trx, payment, legs), deps.public_base_url);
  await recordEvent(trx, at, {
    merchant_id: payment.merchant_id,
    is_sandbox: payment.is_sandbox,
    type,
    resource_type: 'payment',
    resource_id: payment.id,
    data: view as unknown as Record<string, unknown>,
    flat: paymentEventFields(view),
  });
  return view;
}

/** The currency's default rail, or the requested one when the currency supports it (else 400). */
export function resolvePaymentMethod(currency: Currency, requested: PaymentMethod | undefined): PaymentMethod {
  const methods = METHODS_BY_CURRENCY[currency];
  const payment_method = requested ?? present(methods[0], `${currency} has a default payment method`);
  if (!methods.includes(payment_method)) {
    throw paymentMethodUnsupported(currency, methods, payment_method);
  }
  return payment_method;
}

export interface NewPayment {
  id: string;
  scope: MerchantScope;
  order_id: string;
  amount_minor: number;
  currency: Currency;
  payment_method: PaymentMethod;
  return_url: string;
  metadata: Record<string, string>;
  quote_lock_id: string | null;
  expires_at: Date;
  created_at: Date;
  /** Insert straight as `matched` (its legs are planned already; created and matching carry no event). */
  matched_at?: Date;
}

/**
 * A sandbox simulation's match: its synthetic legs and the contract's `synthetic_match` block (the sandbox module
 * plays the scenario; the payments module alone writes payment rows).
 */
export async function recordSyntheticMatch(
  trx: Trx,
  payment_id: string,
  legs: readonly LegRow[],
  synthetic_match: Record<string, unknown>,
): Promise<void> {
  await trx
    .insertInto('payment_legs')
    .values([...legs])
    .execute();
  await trx
    .updateTable('payments')
    .set({ synthetic_match: JSON.stringify(synthetic_match) })
    .where('id', '=', payment_id)
    .execute();
}

/** The row of a new payment: `created`, or `matched` when its legs are planned already (NewPayment.matched_at). */
export function newPaymentRow(input: NewPayment): PaymentRow {
  return {
    id: input.id,
    merchant_id: input.scope.merchant_id,
    is_sandbox: input.scope.is_sandbox,
    order_id: input.order_id,
    amount_minor: input.amount_minor,
    currency: input.currency,
    payment_method: input.payment_method,
    return_url: input.return_url,
    status: input.matched_at ? 'matched' : 'created',
    metadata: input.metadata,
    quote_lock_id: input.quote_lock_id,
    failure_reason: null,
    synthetic_match: null,
    settlement_id: null,
    fee_bps: null,
    fee_minor: null,
    fee_micro_pay: null,
    expires_at: input.expires_at,
    created_at: input.created_at,
    matched_at: input.matched_at ?? null,
    checkout_opened_at: null,
    confirming_at: null,
    completed_at: null,
    failed_at: null,
    expired_at: null,
    cancelled_at: null,
    settled_at: null,
  };
}

/**
 * Inserts a payment in status `created` (or `matched`, see NewPayment) inside `trx`. A duplicate order_id (per
 * merchant and mode) is 409 PAYMENT_DUPLICATE_ORDER_ID: the unique index decides, also against a concurrent insert
 * (which this one waits for), and only then is the existing id read for the message.
 */
export async function insertPayment(trx: Trx, input: NewPayment): Promise<PaymentRow> {
  const row = newPaymentRow(input);
  const inserted = await trx
    .insertInto('payments')
    .values({ ...row, metadata: JSON.stringify(row.metadata) })
    .onConflict((conflict) => conflict.constraint('payments_order_id_unique').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!inserted) {
    const existing = await trx
      .selectFrom('payments')
      .select('id')
      .where('merchant_id', '=', input.scope.merchant_id)
      .where('is_sandbox', '=', input.scope.is_sandbox)
      .where('order_id', '=', input.order_id)
      .executeTakeFirst();
    throw duplicateOrderId(input.order_id, existing?.id);
  }
  return row;
}

async function findOwned(executor: Db | Trx, scope: MerchantScope, id: string): Promise<PaymentRow> {
  return owned(
    await executor.selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirst(),
    scope,
    OWNERSHIP.payment,
  );
}

/** Expires a due payment inside `trx` (releases its liquidity, emits `payment.expired`); returns the row as it is now. */
async function expireIfDue(deps: PaymentsDeps, trx: Trx, payment: PaymentRow, now: Date): Promise<PaymentRow> {
  if (!isDue(payment, now)) return payment;
  const legs = await loadLegs(trx, payment.id);
  const expired = await transition(trx, payment, 'expired', now);
  await releaseLegs(trx, legs);
  await emitPaymentEvent(trx, now, deps, expired, legs, 'payment.expired');
  return expired;
}

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

/**
 * The read by id with its legs: the hot read, prepared (db/prepared.ts). Named columns, not `*`: a column added by a
 * migration under a live connection then leaves the prepared statement's result type as it was.
 */
const paymentWithLegs = preparedQuery<PresentedPayment & { legs: StoredLeg[] | string }, [id: string]>((db) =>
  db.selectFrom('payments').select(PRESENTED_COLUMNS).select(legsJson.as('legs')).where('id', '=', ''),
);

function parseLegs(value: StoredLeg[] | string): PresentedLeg[] {
  const legs = typeof value === 'string' ? (JSON.parse(value) as StoredLeg[]) : value;
  return legs.map((leg) => ({
    ...leg,
    allocated_fiat_amount: Number(leg.allocated_fiat_amount),
    amount_micro_pay: Number(leg.amount_micro_pay),
    proof: leg.proof ? legProof(leg.proof) : null,
  }));
}

/** Reads a payment; a matched or payment_pending one past `expires_at` becomes `expired` on the way (lazy expiry). One query when nothing expires. */
export async function getPayment(deps: PaymentsDeps, scope: MerchantScope, id: string): Promise<PaymentView> {
  const now = deps.clock.now();
  const [row] = await paymentWithLegs(deps.db, id);
  // The row is presented as it is (presentPayment picks its fields): no copy without `legs`.
  const payment = owned(row, scope, OWNERSHIP.payment);
  if (isDue(payment, now) || (payment.status === 'confirming' && payment.expires_at.getTime() <= now.getTime())) {
    return deps.db.transaction().execute(async (trx) => {
      const locked = await lockPayment(trx, id);
      const due = await expireIfDue(
        deps,
        trx,
        present(locked, `payment ${id} exists after its read (rows are never deleted)`),
        now,
      );
      const current = await failIfProofMissing(deps, trx, due, now);
      return presentPayment(current, await legsWithProofs(trx, current, await loadLegs(trx, id)), deps.public_base_url);
    });
  }
  return presentPayment(payment, parseLegs(payment.legs), deps.public_base_url);
}

export interface ListPaymentsQuery {
  status?: PaymentStatus[] | undefined;
  order_id?: string | undefined;
  /** Order ids that start with this text (the dashboard's search). */
  order_id_prefix?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  cursor?: string | undefined;
  limit: number;
  offset?: number | undefined;
}

export async function listPayments(deps: PaymentsDeps, scope: MerchantScope, query: ListPaymentsQuery) {
  let select = deps.db
    .selectFrom('payments')
    .select(PRESENTED_COLUMNS)
    .select(legsJson.as('legs'))
    .where('merchant_id', '=', scope.merchant_id)
    .where('is_sandbox', '=', scope.is_sandbox);
  if (query.status?.length) select = select.where('status', 'in', query.status);
  if (query.order_id !== undefined) select = select.where('order_id', '=', query.order_id);
  if (query.order_id_prefix)
    select = select.where('order_id', 'like', `${query.order_id_prefix.replace(/[\\%_]/g, (char) => `\\${char}`)}%`);
  if (query.from) select = select.where('created_at', '>=', new Date(query.from));
  if (query.to) select = select.where('created_at', '<', new Date(query.to));
  // The deprecated offset pages only without a cursor.
  if (query.cursor === undefined && query.offset) select = select.offset(query.offset);
  return listPage(select, query, ({ legs, ...row }) => presentPayment(row, parseLegs(legs), deps.public_base_url), {
    id_format: 'payment_id',
  });
}

/** Cancels a payment that is still `created` or `matching`; any other status is 409 PAYMENT_BAD_STATE. */
export async function cancelPayment(deps: PaymentsDeps, scope: MerchantScope, id: string): Promise<PaymentView> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    await findOwned(trx, scope, id);
    const payment = await expireIfDue(
      deps,
      trx,
      present(await lockPayment(trx, id), `payment ${id} exists after findOwned (rows are never deleted)`),
      now,
    );
    if (!CANCELLABLE.includes(payment.status)) {
      throw paymentNotCancellable(payment.status);
    }
    const legs = await loadLegs(trx, id);
    const cancelled = await transition(trx, payment, 'cancelled', now);
    await releaseLegs(trx, legs);
    return emitPaymentEvent(trx, now, deps, cancelled, legs, 'payment.cancelled');
  });
}

export interface ProofReceipt {
  id: string;
  leg: number;
  sha256: string;
  content_type: string;
  size_bytes: number;
  received_at: string;
}

export interface ProofUploadResult {
  payment_id: string;
  status: string;
  /** The first slip of this upload (the only one for a one-leg payment). */
  proof: ProofReceipt;
  /** Every slip of this upload, one per leg. */
  proofs: ProofReceipt[];
}

/** The upload: `proof` parts in order, and the `leg` field when one part names its leg. */
export interface ProofUpload {
  files: readonly Uint8Array[];
  leg?: number | undefined;
}

/**
 * A `confirming` payment still missing a leg's slip at `expires_at` fails (`proof_missing`, liquidity released,
 * `payment.failed`); returns the row as it is now.
 */
async function failIfProofMissing(deps: PaymentsDeps, trx: Trx, payment: PaymentRow, now: Date): Promise<PaymentRow> {
  if (payment.status !== 'confirming' || payment.expires_at.getTime() > now.getTime()) return payment;
  const legs = await loadLegs(trx, payment.id);
  const proven = await trx
    .selectFrom('payment_proofs')
    .select('match_order')
    .where('payment_id', '=', payment.id)
    .execute();
  if (legs.every((leg) => proven.some((proof) => proof.match_order === leg.match_order))) return payment;
  const failed = await transition(trx, payment, 'failed', now, { failure_reason: PROOF_MISSING });
  await releaseLegs(trx, legs);
  await emitPaymentEvent(trx, now, deps, failed, legs, 'payment.failed');
  return failed;
}

/** Why a payment failed when a leg had no slip at `expires_at`. */
export const PROOF_MISSING = 'proof_missing';

/**
 * Takes the buyer's slips (DESIGN 3a "Multi-leg proofs"): one `proof` part per leg in `match_order`, starting at the
 * first leg without a slip, or one part with a `leg` field. The payment must be `matched` or `payment_pending`, or
 * `confirming` with a leg still unproven; the first accepted upload moves it to `confirming` (`payment.confirming`),
 * and the worker then judges each leg's slip. `scope` null is the hosted checkout (scoped to the payment id).
 * Types are read from the bytes; a file already used on another payment or another leg is 409 PROOF_DUPLICATE;
 * the same file sent again for its own leg is answered as before (a retried upload).
 */
export async function uploadProof(
  deps: PaymentsDeps,
  scope: MerchantScope | null,
  id: string,
  upload: ProofUpload,
): Promise<ProofUploadResult> {
  if (upload.files.length === 0) checkProof(undefined);
  if (upload.leg !== undefined && upload.files.length !== 1) throw proofLegWithParts();
  const files = upload.files.map((file) => {
    const checked = checkProof(file);
    return { ...checked, sha256: sha256Hex(checked.bytes) };
  });
  if (new Set(files.map((file) => file.sha256)).size !== files.length) throw proofDuplicate();
  const now = deps.clock.now();
  const result = await deps.db.transaction().execute(async (trx) => {
    if (scope) await findOwned(trx, scope, id);
    const locked = await lockPayment(trx, id);
    if (!locked) throw notFound('Payment');
    const payment = await failIfProofMissing(deps, trx, await expireIfDue(deps, trx, locked, now), now);
    if (payment.status !== locked.status && (payment.status === 'expired' || payment.status === 'failed'))
      return { expired: true as const };
    if (!OPEN_FOR_PROOF.includes(payment.status) && payment.status !== 'confirming')
      throw proofNotAccepted(payment.status);
    const legs = await loadLegs(trx, id);
    const existing = await trx
      .selectFrom('payment_proofs')
      .select(['id', 'match_order', 'sha256', 'content_type', 'size_bytes', 'created_at'])
      .where('payment_id', '=', id)
      .execute();
    const receipt = (row: (typeof existing)[number]): ProofReceipt => ({
      id: row.id,
      leg: row.match_order,
      sha256: row.sha256,
      content_type: row.content_type,
      size_bytes: row.size_bytes,
      received_at: row.created_at.toISOString(),
    });
    const open = legs
      .filter((leg) => !existing.some((proof) => proof.match_order === leg.match_order))
      .map((leg) => leg.match_order);
    const receipts: ProofReceipt[] = [];
    const fresh: { file: (typeof files)[number]; leg: number }[] = [];
    for (const file of files) {
      const again = existing.find((proof) => proof.sha256 === file.sha256);
      if (again && (upload.leg === undefined || upload.leg === again.match_order)) {
        receipts.push(receipt(again));
        continue;
      }
      if (again) throw proofDuplicate();
      let leg: number;
      if (upload.leg !== undefined) {
        if (!legs.some((candidate) => candidate.match_order === upload.leg))
          throw proofLegUnknown(upload.leg, legs.length);
        if (!open.includes(upload.leg)) throw proofLegTaken(upload.leg);
        leg = upload.leg;
      } else {
        const next = open[fresh.length];
        if (next === undefined)
          throw open.length === 0 ? proofAllLegsTaken() : proofTooManyParts(files.length, open.length);
        leg = next;
      }
      fresh.push({ file, leg });
    }
    if (fresh.length > 0) {
      const reused = await trx
        .selectFrom('payment_proofs')
        .select('payment_id')
        .where(
          'sha256',
          'in',
          fresh.map(({ file }) => file.sha256),
        )
        .where('is_sandbox', '=', payment.is_sandbox)
        .where('payment_id', '!=', id)
        .executeTakeFirst();
      if (reused) throw proofDuplicate();
      const rows = fresh.map(({ file, leg }) => ({
        id: randomUUID(),
        payment_id: id,
        match_order: leg,
        is_sandbox: payment.is_sandbox,
        sha256: file.sha256,
        content_type: file.content_type,
        size_bytes: file.bytes.byteLength,
        data: file.bytes,
        attempts: 0,
        next_attempt_at: now,
        created_at: now,
        verdict: null,
        verdict_reason: null,
        validator_kind: null,
        validator_response: null,
        claimed_until: null,
      }));
      await trx.insertInto('payment_proofs').values(rows).execute();
      for (const row of rows) receipts.push(receipt(row));
    }
    receipts.sort((a, b) => a.leg - b.leg);
    let current = payment;
    if (payment.status !== 'confirming') {
      current = await transition(trx, payment, 'confirming', now);
      await emitPaymentEvent(trx, now, deps, current, legs, 'payment.confirming');
    }
    const first = present(receipts[0], 'an upload has at least one proof');
    return {
      expired: false as const,
      fresh: fresh.length,
      value: { payment_id: id, status: current.status, proof: first, proofs: receipts },
    };
  });
  // The expiry committed; only then is the late upload refused.
  if (result.expired) throw expiredBeforeProof();
  if (result.fresh > 0) deps.onProofReceived?.();
  return result.value;
}

/** How many `proof` parts an upload may carry: one per leg of the payment (one for an unknown id, which is then 404). */
export async function proofPartsAllowed(deps: Pick<PaymentsDeps, 'db'>, id: string): Promise<number> {
  const row = await deps.db
    .selectFrom('payment_legs')
    .select((eb) => eb.fn.countAll<number>().as('legs'))
    .where('payment_id', '=', id)
    .executeTakeFirst();
  return Math.max(1, Number(row?.legs ?? 0));
}

/** The buyer opened the hosted checkout: matched -> payment_pending (once). */
export async function markCheckoutOpened(deps: PaymentsDeps, id: string): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const locked = await lockPayment(trx, id);
    if (!locked) return;
    const payment = await expireIfDue(deps, trx, locked, now);
    if (payment.status !== 'matched') return;
    const pending = await transition(trx, payment, 'payment_pending', now, { checkout_opened_at: now });
    await emitPaymentEvent(trx, now, deps, pending, await loadLegs(trx, id), 'payment.payment_pending');
  });
}

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
      .execute(async (trx) =>
        expireIfDue(
          deps,
          trx,
          present(await lockPayment(trx, id), `payment ${id} exists after its read (rows are never deleted)`),
          now,
        ),
      );
  }
  return { payment, legs: await loadLegs(deps.db, id) };
}

/**
 * Worker sweep: expires due payments and fails `confirming` ones still missing a leg's slip at `expires_at`, in
 * batches, each payment with its event, skipping rows another worker holds.
 */
export async function expireDuePayments(deps: PaymentsDeps, batch = 100): Promise<number> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const due = await trx
      .selectFrom('payments')
      .selectAll()
      .where((eb) =>
        eb.or([
          eb('status', 'in', OPEN_FOR_PROOF),
          eb.and([
            eb('status', '=', 'confirming'),
            eb.exists(
              eb
                .selectFrom('payment_legs as leg')
                .select('leg.match_order')
                .whereRef('leg.payment_id', '=', 'payments.id')
                .where(({ not, exists, selectFrom }) =>
                  not(
                    exists(
                      selectFrom('payment_proofs as proof')
                        .select('proof.id')
                        .whereRef('proof.payment_id', '=', 'leg.payment_id')
                        .whereRef('proof.match_order', '=', 'leg.match_order'),
                    ),
                  ),
                ),
            ),
          ]),
        ]),
      )
      .where('expires_at', '<=', now)
      .orderBy('expires_at')
      .limit(batch)
      .forUpdate()
      .skipLocked()
      .execute();
    // Every seller the batch will give liquidity back to, locked first in the reservation's order (one lock order).
    if (due.length > 1) {
      const sellers = await trx
        .selectFrom('payment_legs')
        .select('seller_id')
        .where(
          'payment_id',
          'in',
          due.map((payment) => payment.id),
        )
        .execute();
      await lockSellersInOrder(
        trx,
        sellers.map((leg) => leg.seller_id),
      );
    }
    for (const payment of due) await failIfProofMissing(deps, trx, await expireIfDue(deps, trx, payment, now), now);
    return due.length;
  });
}
