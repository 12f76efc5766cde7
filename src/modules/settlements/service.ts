import { randomUUID } from 'node:crypto';
import type { Db, Executor, Trx } from '../../db/database.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { listPage } from '../../http/pagination.ts';
import type { Clock } from '../../lib/clock.ts';
import { loadConfig } from '../../config.ts';
import { notFound } from '../../lib/errors.ts';
import { ofMerchant, OWNERSHIP, owned } from '../../http/ownership.ts';
import { minorToDecimal, toSafeNumber, type Currency } from '../../lib/money.ts';
import { eventAbout, recordEvent } from '../events/outbox.ts';
import {
  claimUnsettledPayments,
  markPaymentSettled,
  unsettledGroups,
  type SettlementGroup,
  refundedByPayment,
  refundedInSettlement,
} from '../payments/settlement-port.ts';
import type { PaymentRow } from '../payments/tables.ts';
import { feeOf } from '../payments/fees.ts';
import { listAdminActions, recordAdminAction, type AdminActor } from '../audit/service.ts';
import {
  csvLine,
  CSV_COLUMNS,
  presentAdjustment,
  presentItem,
  presentSettlement,
  type AdjustmentView,
  type SettlementView,
} from './present.ts';
import { transitionSettlement } from './state.ts';
import type { SettlementRow, SettlementStatus } from './tables.ts';
import {
  adjustmentBelowZero,
  onlyCompletedCanFail,
  onlyFailedCanRetry,
  pendingNotAdjustable,
  zeroAdjustment,
} from './errors.ts';

export interface SettlementsDeps {
  db: Db;
  clock: Clock;
  /** SETTLEMENT_FEE_BPS: the fee of every new batch, in basis points of each payment. */
  fee_bps: number;
  /** Most payments in one batch (one transaction); a bigger group becomes several batches. */
  batch_max_payments?: number;
  /** Failpoint for tests: runs inside each batch's transaction just before it commits (a throw is a crash there). */
  before_commit?: (batch: SettlementRow) => void | Promise<void>;
}

export const DEFAULT_BATCH_MAX_PAYMENTS = 500;

/**
 * The fee of one payment in a batch: the fee taken when it completed (its ledger postings), so the statement and the
 * ledger agree to the micro-PAY. A payment completed without a recorded fee is charged `floor(amount * fee_bps /
 * 10000)` on the statement only (nothing was posted for it, so its PAY fee is 0).
 */
function itemFee(payment: PaymentRow, fee_bps: number): { fee_minor: number; fee_micro_pay: number } {
  if (payment.fee_minor !== null) return { fee_minor: payment.fee_minor, fee_micro_pay: payment.fee_micro_pay ?? 0 };
  return { fee_minor: feeOf(settledAmount(payment), fee_bps), fee_micro_pay: 0 };
}

/** What a payment brings to a batch: its amount, or what arrived when it is partly paid. */
function settledAmount(payment: PaymentRow): number {
  return payment.status === 'partially_paid' ? Number(payment.amount_received_minor) : payment.amount_minor;
}

/** The rate the batch's payments were charged at when they all share one (the usual case), else the run's. */
function batchFeeBps(payments: readonly PaymentRow[], fee_bps: number): number {
  const rates = new Set(payments.map((payment) => payment.fee_bps ?? fee_bps));
  return rates.size === 1 ? (rates.values().next().value ?? fee_bps) : fee_bps;
}

async function recordSettlementEvent(trx: Trx, at: Date, batch: SettlementRow, type: string): Promise<SettlementView> {
  const view = presentSettlement(batch);
  await recordEvent(trx, at, {
    ...eventAbout('settlement', batch),
    type,
    data: view as unknown as Record<string, unknown>,
    flat: {
      settlement_id: batch.id,
      amount: batch.net_minor,
      currency: batch.currency,
      status: batch.status,
      payment_count: batch.payment_count,
    },
  });
  return view;
}

/**
 * Builds one completed batch from payments the caller has locked, inside its transaction: the batch row (`pending`),
 * one item per payment with its fee, each payment `completed` -> `settled`, the batch -> `completed`, and
 * `settlement.completed` in the outbox. Nothing of it exists unless the transaction commits.
 */
async function createBatch(
  trx: Trx,
  at: Date,
  group: SettlementGroup,
  payments: readonly PaymentRow[],
  fee_bps: number,
): Promise<SettlementRow> {
  const id = randomUUID();
  const items = payments.map((payment) => {
    const { fee_minor, fee_micro_pay } = itemFee(payment, fee_bps);
    if (payment.completed_at === null) throw new Error(`completed payment ${payment.id} has no completed_at`);
    return {
      settlement_id: id,
      payment_id: payment.id,
      order_id: payment.order_id,
      amount_minor: settledAmount(payment),
      fee_minor,
      fee_micro_pay,
      net_minor: settledAmount(payment) - fee_minor,
      payment_created_at: payment.created_at,
      completed_at: payment.completed_at,
    };
  });
  const gross = items.reduce((sum, item) => sum + BigInt(item.amount_minor), 0n);
  const fee = items.reduce((sum, item) => sum + BigInt(item.fee_minor), 0n);
  const fee_micro_pay = items.reduce((sum, item) => sum + BigInt(item.fee_micro_pay), 0n);
  const pending = await trx
    .insertInto('settlements')
    .values({
      id,
      merchant_id: group.merchant_id,
      is_sandbox: group.is_sandbox,
      currency: group.currency,
      status: 'pending',
      fee_bps: batchFeeBps(payments, fee_bps),
      payment_count: items.length,
      gross_minor: toSafeNumber(gross),
      fee_minor: toSafeNumber(fee),
      fee_micro_pay: toSafeNumber(fee_micro_pay),
      adjustments_minor: 0,
      net_minor: toSafeNumber(gross - fee),
      failure_reason: null,
      retry_count: 0,
      created_at: at,
      completed_at: null,
      failed_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  // The state machine first: a payment that is not `completed` any more fails here with PAYMENT_BAD_STATE.
  for (const payment of payments) await markPaymentSettled(trx, payment, id, at);
  if (items.length > 0) await trx.insertInto('settlement_items').values(items).execute();
  const completed = await transitionSettlement(trx, pending, 'completed', at);
  await recordSettlementEvent(trx, at, completed, 'settlement.completed');
  return completed;
}

/**
 * A settlement run (the worker job, `POST /admin/settlements/run`, `mpay settlements run`): for every merchant, mode
 * and currency with completed, unsettled payments, one batch per transaction. Several runs may overlap: each batch
 * claims its payments with SKIP LOCKED, and `settlement_items.payment_id` is unique besides. A crash rolls back the
 * batch in flight; the next run picks its payments up again, and batches already committed stay as they are.
 */
export async function runSettlements(deps: SettlementsDeps): Promise<SettlementView[]> {
  const cutoff = deps.clock.now();
  const max = deps.batch_max_payments ?? DEFAULT_BATCH_MAX_PAYMENTS;
  const made: SettlementView[] = [];
  for (const group of await unsettledGroups(deps.db, cutoff)) {
    for (;;) {
      const batch = await deps.db.transaction().execute(async (trx) => {
        const payments = await claimUnsettledPayments(trx, group, cutoff, max);
        if (payments.length === 0) return null;
        const created = await createBatch(trx, cutoff, group, payments, deps.fee_bps);
        await deps.before_commit?.(created);
        return created;
      });
      if (!batch) break;
      made.push(presentSettlement(batch));
      if (batch.payment_count < max) break;
    }
  }
  return made;
}

/** The scheduler's job: how many batches this pass made (0 lets it sleep until the next interval). */
export async function settlementJob(deps: SettlementsDeps): Promise<number> {
  return (await runSettlements(deps)).length;
}

let default_fee_bps: number | undefined;

/**
 * The sandbox `settlement_cycle` scenario: a completed sandbox batch holding just this (completed, sandbox) payment,
 * with the fee computed as a run would, the payment `settled` and `settlement.completed` recorded, all in the caller's
 * transaction. `fee_bps` defaults to SETTLEMENT_FEE_BPS from the environment; callers that hold the app's config
 * should pass `config.settlement_fee_bps`.
 */
export async function settleSandboxPayment(
  trx: Trx,
  at: Date,
  payment: PaymentRow,
  fee_bps?: number,
): Promise<{ settlement_id: string }> {
  if (!payment.is_sandbox) throw new Error(`settleSandboxPayment settles sandbox payments only; ${payment.id} is live`);
  const bps = fee_bps ?? (default_fee_bps ??= loadConfig(process.env).settlement_fee_bps);
  const batch = await createBatch(
    trx,
    at,
    { merchant_id: payment.merchant_id, is_sandbox: true, currency: payment.currency },
    [payment],
    bps,
  );
  return { settlement_id: batch.id };
}

// ---- merchant reads --------------------------------------------------------------------------------------------

async function findOwned(executor: Executor, scope: MerchantScope, id: string): Promise<SettlementRow> {
  return owned(
    await executor.selectFrom('settlements').selectAll().where('id', '=', id).executeTakeFirst(),
    scope,
    OWNERSHIP.settlement,
  );
}

export interface ListQuery {
  cursor?: string | undefined;
  limit: number;
}

export async function listSettlements(
  db: Db,
  scope: MerchantScope,
  query: ListQuery & { status?: SettlementStatus[] | undefined },
) {
  let select = db.selectFrom('settlements').selectAll().where(ofMerchant(scope));
  if (query.status?.length) select = select.where('status', 'in', query.status);
  return listPage(select, query, presentSettlement);
}

export type SettlementDetail = SettlementView & {
  refunded_minor: number;
  refunded_decimal: string;
  adjustments: AdjustmentView[];
};

async function detail(executor: Executor, batch: SettlementRow): Promise<SettlementDetail> {
  const adjustments = await executor
    .selectFrom('settlement_adjustments')
    .selectAll()
    .where('settlement_id', '=', batch.id)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const refunded_minor = await refundedInSettlement(executor, batch.id);
  return {
    ...presentSettlement(batch),
    refunded_minor,
    refunded_decimal: minorToDecimal(refunded_minor, batch.currency as Currency),
    adjustments: adjustments.map((row) => presentAdjustment(row, batch.currency)),
  };
}

export async function getSettlement(db: Db, scope: MerchantScope, id: string): Promise<SettlementDetail> {
  return detail(db, await findOwned(db, scope, id));
}

/** The batch's payments, newest payment first, keyset on (payment created_at, payment id). */
export async function listSettlementPayments(db: Db, scope: MerchantScope, id: string, query: ListQuery) {
  const batch = await findOwned(db, scope, id);
  const select = db.selectFrom('settlement_items').selectAll().where('settlement_id', '=', batch.id);
  const page = await listPage(select, query, (row) => row, {
    created_at: 'payment_created_at',
    id: 'payment_id',
    id_format: 'payment_id',
    positionOf: (row) => ({ created_at: row.payment_created_at, id: row.payment_id }),
  });
  const refunded = await refundedByPayment(
    db,
    page.data.map((row) => row.payment_id),
  );
  return { ...page, data: page.data.map((row) => presentItem(row, batch.currency, refunded.get(row.payment_id) ?? 0)) };
}

/** One CSV line per payment after a header row, amounts in minor units and as decimals, oldest payment first. */
export async function exportSettlementCsv(
  db: Db,
  scope: MerchantScope,
  id: string,
): Promise<{ filename: string; csv: string }> {
  const batch = await findOwned(db, scope, id);
  const rows = await db
    .selectFrom('settlement_items')
    .selectAll()
    .where('settlement_id', '=', batch.id)
    .orderBy('payment_created_at')
    .orderBy('payment_id')
    .execute();
  const refunded = await refundedByPayment(
    db,
    rows.map((row) => row.payment_id),
  );
  const lines = [
    CSV_COLUMNS.join(','),
    ...rows.map((row) => csvLine(presentItem(row, batch.currency, refunded.get(row.payment_id) ?? 0))),
  ];
  return { filename: `settlement-${batch.id}.csv`, csv: `${lines.join('\r\n')}\r\n` };
}

// ---- operator actions (admin routes); each is one transaction with its audit row ----------------------------------

async function lockBatch(trx: Trx, id: string): Promise<SettlementRow> {
  const batch = await trx.selectFrom('settlements').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  if (!batch) throw notFound('Settlement');
  return batch;
}

/** Runs settlement now for an operator and records who did it. */
export async function runSettlementsByOperator(
  deps: SettlementsDeps,
  actor: AdminActor,
): Promise<{ batches: SettlementView[]; payment_count: number }> {
  const batches = await runSettlements(deps);
  const payment_count = batches.reduce((sum, batch) => sum + batch.payment_count, 0);
  await deps.db.transaction().execute((trx) =>
    recordAdminAction(trx, {
      at: deps.clock.now(),
      actor,
      action: 'settlement.run',
      target_type: 'settlement_run',
      target_id: randomUUID(),
      details: { settlement_ids: batches.map((batch) => batch.id), payment_count },
    }),
  );
  return { batches, payment_count };
}

/** completed -> failed: the merchant's bank returned the payout. Emits `settlement.failed`. */
export async function failSettlement(
  deps: SettlementsDeps,
  actor: AdminActor,
  id: string,
  reason: string,
): Promise<SettlementDetail> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const batch = await lockBatch(trx, id);
    if (batch.status !== 'completed') throw onlyCompletedCanFail(batch.status);
    const failed = await transitionSettlement(trx, batch, 'failed', now, { failure_reason: reason });
    await recordAdminAction(trx, {
      at: now,
      actor,
      action: 'settlement.fail',
      target_type: 'settlement',
      target_id: id,
      details: { reason, from: batch.status },
    });
    await recordSettlementEvent(trx, now, failed, 'settlement.failed');
    return detail(trx, failed);
  });
}

/**
 * failed -> completed: the operator pays the batch out again. Emits `settlement.retried` (the batch, completed again,
 * with its `retry_count`): `settlement.completed` is the batch's first completion and is emitted once per batch.
 */
export async function retrySettlement(deps: SettlementsDeps, actor: AdminActor, id: string): Promise<SettlementDetail> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const batch = await lockBatch(trx, id);
    if (batch.status !== 'failed') throw onlyFailedCanRetry(batch.status);
    const completed = await transitionSettlement(trx, batch, 'completed', now, {
      failure_reason: null,
      retry_count: batch.retry_count + 1,
    });
    await recordAdminAction(trx, {
      at: now,
      actor,
      action: 'settlement.retry',
      target_type: 'settlement',
      target_id: id,
      details: { previous_failure_reason: batch.failure_reason, retry_count: completed.retry_count },
    });
    await recordSettlementEvent(trx, now, completed, 'settlement.retried');
    return detail(trx, completed);
  });
}

/**
 * A signed correction of a batch's net (a credit for a missed payment, a debit for a refund outside the gateway).
 * The net may not go below zero (409 SETTLEMENT_BAD_STATE). Emits `settlement.adjusted`.
 */
export async function adjustSettlement(
  deps: SettlementsDeps,
  actor: AdminActor,
  id: string,
  input: { amount_minor: number; reason: string },
): Promise<SettlementDetail> {
  const now = deps.clock.now();
  if (input.amount_minor === 0) throw zeroAdjustment();
  return deps.db.transaction().execute(async (trx) => {
    const batch = await lockBatch(trx, id);
    if (batch.status === 'pending') throw pendingNotAdjustable();
    const net_minor = batch.net_minor + input.amount_minor;
    if (net_minor < 0) {
      throw adjustmentBelowZero(batch.net_minor, input.amount_minor);
    }
    const adjustment_id = randomUUID();
    await trx
      .insertInto('settlement_adjustments')
      .values({
        id: adjustment_id,
        settlement_id: id,
        amount_minor: input.amount_minor,
        reason: input.reason,
        actor_user_id: actor.actor_user_id,
        created_at: now,
      })
      .execute();
    const adjusted = await trx
      .updateTable('settlements')
      .set({ adjustments_minor: batch.adjustments_minor + input.amount_minor, net_minor })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAdminAction(trx, {
      at: now,
      actor,
      action: 'settlement.adjust',
      target_type: 'settlement',
      target_id: id,
      details: {
        adjustment_id,
        amount_minor: input.amount_minor,
        reason: input.reason,
        net_minor_before: batch.net_minor,
        net_minor_after: net_minor,
      },
    });
    await recordSettlementEvent(trx, now, adjusted, 'settlement.adjusted');
    return detail(trx, adjusted);
  });
}

/** Operator actions on one batch, newest first; with `include_archived`, those copied to the archive after 90 days too. */
export async function settlementAuditLog(
  db: Db,
  id: string,
  query: ListQuery & { include_archived?: boolean | undefined },
) {
  const batch = await db.selectFrom('settlements').select('id').where('id', '=', id).executeTakeFirst();
  if (!batch) throw notFound('Settlement');
  return listAdminActions(db, { target_type: 'settlement', target_id: id }, query);
}
