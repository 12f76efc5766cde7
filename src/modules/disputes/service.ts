import { randomUUID } from 'node:crypto';
import type { Db, Trx } from '../../db/database.ts';
import { canMove, defineStateMachine, mover } from '../../db/state-machine.ts';
import { OWNERSHIP, owned } from '../../http/ownership.ts';
import type { MerchantScope } from '../../http/principal.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { recordAdminAction } from '../audit/service.ts';
import { recordEvent } from '../events/outbox.ts';
import { accounts, type Ledger } from '../ledger/port.ts';
import { sellOrderForDispute } from '../sell-orders/service.ts';
import type { FillReversal } from '../buy-orders/ledger.ts';
import { orderDeliveriesAfter } from '../webhooks/dispatcher.ts';
import type { SellOrderRow } from '../sell-orders/tables.ts';
import type { DisputeAction, DisputeKind, DisputeOutcome, DisputeRow, DisputeStatus, LedgerEffect } from './tables.ts';
import { present } from '../../lib/assert.ts';
import type { DisputeView } from './schema.ts';
import { presentDispute } from './present.ts';
import { loadEvents } from './queries.ts';
import { disputeNotResolvable, resolutionBurnUncovered, unresolvedDisputeExists } from './errors.ts';

export interface DisputesDeps {
  db: Db;
  clock: Clock;
  ledger: Ledger;
}

export interface Actor {
  actor_user_id: string;
  actor_role: string;
}

export const DISPUTE_STATUSES: readonly DisputeStatus[] = ['opened', 'investigating', 'resolved', 'escalated'];
export const DISPUTE_KINDS: readonly DisputeKind[] = ['cash_leg_failure', 'merchant_dispute', 'chargeback'];
export const DISPUTE_OUTCOMES: readonly DisputeOutcome[] = ['favor_merchant', 'favor_counterparty', 'no_action'];

/** Every allowed move of a dispute (contract 3.4; an escalated dispute is resolved too, docs/disputes.md). */
export const DISPUTE_TRANSITIONS: Record<DisputeStatus, readonly DisputeStatus[]> = {
  opened: ['investigating'],
  investigating: ['escalated', 'resolved'],
  escalated: ['resolved'],
  resolved: [],
};

const DISPUTE_STATES = defineStateMachine({
  table: 'disputes',
  noun: 'dispute',
  moves: DISPUTE_TRANSITIONS,
  entered_at: { investigating: 'investigating_at', escalated: 'escalated_at', resolved: 'resolved_at' },
  conflict: 'DISPUTE_BAD_STATE',
});
const WEBHOOK_OF: Partial<Record<DisputeAction, string>> = {
  opened: 'gateway.dispute.opened',
  escalated: 'gateway.dispute.escalated',
  resolved: 'gateway.dispute.resolved',
};

/** PAY a resolution mints or burns moves against this issuance account, so dispute effects are visible on their own. */
export const disputesIssuanceAccount = (is_sandbox: boolean) => accounts.mintSource('disputes', is_sandbox);

export type { DisputeEventView, DisputeView } from './schema.ts';
export { presentDispute } from './present.ts';
export {
  getDisputeForAdmin,
  getMerchantDispute,
  type ListDisputesQuery,
  listAllDisputes,
  listMerchantDisputes,
} from './queries.ts';

/** One row of the dispute's own log (with `actor_user_id`) plus, for the three public kinds, its webhook. */
async function logAction(
  trx: Trx,
  at: Date,
  dispute: DisputeRow,
  entry: {
    action: DisputeAction;
    from_status: DisputeStatus | null;
    actor: Actor;
    notes: string | null;
    details?: Record<string, unknown>;
  },
): Promise<void> {
  const last = await trx
    .selectFrom('dispute_events')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('dispute_id', '=', dispute.id)
    .executeTakeFirst();
  await trx
    .insertInto('dispute_events')
    .values({
      id: randomUUID(),
      dispute_id: dispute.id,
      seq: Number(last?.seq ?? 0) + 1,
      action: entry.action,
      from_status: entry.from_status,
      to_status: dispute.status,
      actor_user_id: entry.actor.actor_user_id,
      actor_role: entry.actor.actor_role,
      notes: entry.notes,
      details: JSON.stringify(entry.details ?? {}),
      created_at: at,
    })
    .execute();
  const webhook = WEBHOOK_OF[entry.action];
  if (webhook) {
    await recordEvent(trx, at, {
      merchant_id: dispute.merchant_id,
      is_sandbox: dispute.is_sandbox,
      type: webhook,
      resource_type: 'dispute',
      resource_id: dispute.id,
      data: { ...presentDispute(dispute), actor_user_id: entry.actor.actor_user_id },
    });
    // A dispute's webhooks wait in line behind its sell order's: the sell_order.failed that opened a cash-leg-failure
    // dispute reaches each endpoint before gateway.dispute.opened, even when its first delivery fails and is retried.
    await orderDeliveriesAfter(trx, dispute.id, dispute.sell_order_id);
  }
}

async function insertDispute(
  trx: Trx,
  at: Date,
  order: SellOrderRow,
  kind: DisputeKind,
  notes: string,
  actor: Actor,
  details: Record<string, unknown> = {},
): Promise<DisputeRow | undefined> {
  const dispute = await trx
    .insertInto('disputes')
    .values({
      id: randomUUID(),
      merchant_id: order.merchant_id,
      is_sandbox: order.is_sandbox,
      sell_order_id: order.id,
      kind,
      status: 'opened',
      notes,
      opened_by_user_id: actor.actor_user_id,
      outcome: null,
      ledger_effect: null,
      ledger_amount_micro_pay: null,
      ledger_transfer_id: null,
      created_at: at,
      investigating_at: null,
      escalated_at: null,
      resolved_at: null,
    })
    // One unresolved dispute per sell order (partial unique index): a second one would let two resolutions move PAY twice.
    .onConflict((conflict) => conflict.column('sell_order_id').where('status', '<>', 'resolved').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (dispute)
    await logAction(trx, at, dispute, {
      action: 'opened',
      from_status: null,
      actor,
      notes,
      details: { kind, sell_order_status: order.status, ...details },
    });
  return dispute;
}

/** POST /v1/merchant-disputes: kind `merchant_dispute`, status `opened`, `gateway.dispute.opened`; no ledger operation. */
export async function openMerchantDispute(
  deps: DisputesDeps,
  trx: Trx,
  scope: MerchantScope,
  user_id: string,
  input: { sell_order_id: string; notes: string },
): Promise<DisputeView> {
  const order = owned(await sellOrderForDispute(trx, input.sell_order_id), scope, OWNERSHIP.disputed_sell_order);
  const dispute = await insertDispute(trx, deps.clock.now(), order, 'merchant_dispute', input.notes, {
    actor_user_id: user_id,
    actor_role: 'merchant',
  });
  if (!dispute) throw unresolvedDisputeExists();
  return presentDispute(dispute);
}

/** The auto-open switch: a given-up cash leg opens a `cash_leg_failure` dispute in the failing transaction (at most one open). */
export async function openCashLegFailureDispute(
  trx: Trx,
  order: SellOrderRow,
  at: Date,
  reversals: readonly FillReversal[] = [],
): Promise<void> {
  const reversed_micro_pay = reversals.reduce((sum, fill) => sum + fill.reversed_micro_pay, 0);
  const shortfall_micro_pay = reversals.reduce((sum, fill) => sum + fill.shortfall_micro_pay, 0);
  const notes = `Cash leg failed (${order.failure_reason}) after ${order.cash_leg_attempts} attempt(s); fills taken back: ${reversed_micro_pay} micro-PAY burned, ${shortfall_micro_pay} micro-PAY owed by buyers`;
  await insertDispute(
    trx,
    at,
    order,
    'cash_leg_failure',
    notes,
    { actor_user_id: 'system', actor_role: 'system' },
    { reversal: { reversed_micro_pay, shortfall_micro_pay, fills: reversals } },
  );
}

/**
 * A chargeback is a reversal of the sell order's cash leg on the payout rail: only an order whose cash leg ran can
 * have one, i.e. `completed`, or `failed` after a match.
 */
function chargebackRefusal(order: SellOrderRow): string | null {
  if (order.status === 'completed') return null;
  if (order.status === 'failed' && order.matched_buy_order_id !== null) return null;
  return `A chargeback needs a sell order whose cash leg ran (completed, or failed after a match); this one is ${order.status}${order.failure_reason ? ` (${order.failure_reason})` : ''}`;
}

export interface NewChargeback {
  sell_order_id: string;
  notes: string;
  /** The bank's or card network's case number, kept in the dispute's event log and the admin audit row. */
  reference?: string | undefined;
}

/**
 * `POST /admin/disputes` (kind `chargeback`): an operator records that the payout rail reversed a sell order's cash
 * leg. Status `opened`, `gateway.dispute.opened` to the merchant, an event-log row and an `admin_audit_log` row, in
 * one transaction; no ledger operation (the resolution decides, as for every kind).
 */
export async function openChargeback(deps: DisputesDeps, actor: Actor, input: NewChargeback) {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const order = await sellOrderForDispute(trx, input.sell_order_id);
    if (!order) throw notFound('Sell order');
    const refused = chargebackRefusal(order);
    if (refused)
      throw new AppError('DISPUTE_BAD_STATE', refused, [
        { field: 'body.sell_order_id', message: `sell order is ${order.status}` },
      ]);
    const reference = input.reference ?? null;
    const dispute = await insertDispute(trx, now, order, 'chargeback', input.notes, actor, { reference });
    if (!dispute)
      throw new AppError('DISPUTE_BAD_STATE', 'This sell order already has an unresolved dispute', [
        { field: 'body.sell_order_id', message: 'has an unresolved dispute' },
      ]);
    await auditAdmin(trx, now, actor, 'dispute.chargeback_opened', dispute.id, {
      sell_order_id: order.id,
      merchant_id: order.merchant_id,
      is_sandbox: order.is_sandbox,
      reference,
      notes: input.notes,
    });
    return { ...presentDispute(dispute), events: await loadEvents(trx, dispute.id) };
  });
}

/** One move under the row lock: two operators acting at once, one wins, the other gets 409 DISPUTE_BAD_STATE. */
const move = mover(DISPUTE_STATES);

async function lockDispute(trx: Trx, id: string): Promise<DisputeRow> {
  const dispute = await trx.selectFrom('disputes').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  if (!dispute) throw notFound('Dispute');
  return dispute;
}

const auditAdmin = (
  trx: Trx,
  at: Date,
  actor: Actor,
  action: string,
  dispute_id: string,
  details: Record<string, unknown>,
) => recordAdminAction(trx, { at, actor, action, target_type: 'dispute', target_id: dispute_id, details });

async function adminMove(
  deps: DisputesDeps,
  actor: Actor,
  id: string,
  to: 'investigating' | 'escalated',
  notes: string | undefined,
) {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const dispute = await lockDispute(trx, id);
    const moved = await move(trx, dispute, to, now);
    await logAction(trx, now, moved, { action: to, from_status: dispute.status, actor, notes: notes ?? null });
    await auditAdmin(trx, now, actor, `dispute.${to}`, id, { from_status: dispute.status, notes: notes ?? null });
    return { ...presentDispute(moved), events: await loadEvents(trx, id) };
  });
}

export const investigateDispute = (deps: DisputesDeps, actor: Actor, id: string, notes?: string) =>
  adminMove(deps, actor, id, 'investigating', notes);
export const escalateDispute = (deps: DisputesDeps, actor: Actor, id: string, notes?: string) =>
  adminMove(deps, actor, id, 'escalated', notes);

/**
 * What a resolution does to PAY, from its outcome and the originating sell order:
 * - favor_merchant on a `completed` sell order: the merchant's burned PAY is minted back (the payout is void);
 * - favor_counterparty on a `failed` sell order that had been matched: the buyer already received minted PAY while the
 *   merchant got its reserve back, so the merchant's PAY is burned;
 * - anything else, or when an earlier dispute of the same sell order already moved PAY: nothing.
 */
function ledgerEffectOf(outcome: DisputeOutcome, order: SellOrderRow, already_applied: boolean): LedgerEffect {
  if (already_applied) return 'none';
  if (outcome === 'favor_merchant' && order.status === 'completed') return 'mint';
  if (outcome === 'favor_counterparty' && order.status === 'failed' && order.matched_buy_order_id !== null)
    return 'burn';
  return 'none';
}

/** investigating or escalated -> resolved; mint, burn or nothing with the dispute id as the ledger key; `gateway.dispute.resolved`. */
export async function resolveDispute(
  deps: DisputesDeps,
  actor: Actor,
  id: string,
  input: { outcome: DisputeOutcome; notes?: string | undefined },
) {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const dispute = await lockDispute(trx, id);
    if (!canMove(DISPUTE_STATES, dispute.status, 'resolved')) throw disputeNotResolvable(dispute.status);
    const order = present(
      await sellOrderForDispute(trx, dispute.sell_order_id),
      `dispute ${dispute.id} references an existing sell order (foreign key)`,
    );
    const earlier = await trx
      .selectFrom('disputes')
      .select('id')
      .where('sell_order_id', '=', order.id)
      .where('id', '<>', dispute.id)
      .where('ledger_effect', 'in', ['mint', 'burn'])
      .executeTakeFirst();
    const effect = ledgerEffectOf(input.outcome, order, earlier !== undefined);
    // The part of the order that traded (its fills): all of it unless it closed partially filled.
    const traded_micro_pay = order.filled_micro_pay > 0 ? order.filled_micro_pay : order.amount_micro_pay;
    let transfer_id: string | null = null;
    if (effect !== 'none') {
      const merchant = accounts.merchantAvailable(order.merchant_id, order.is_sandbox);
      const issuance = disputesIssuanceAccount(order.is_sandbox);
      try {
        const transfer = await deps.ledger.transfer(
          {
            key: dispute.id,
            kind: effect,
            debit_account: effect === 'mint' ? issuance : merchant,
            credit_account: effect === 'mint' ? merchant : issuance,
            amount_micro_pay: traded_micro_pay,
            memo: `dispute ${dispute.id} resolved ${input.outcome}`,
          },
          { trx },
        );
        transfer_id = transfer.id;
      } catch (error) {
        if (error instanceof AppError && error.code === 'LEDGER_INSUFFICIENT_FUNDS') {
          throw resolutionBurnUncovered(traded_micro_pay, dispute.status, error.details);
        }
        throw error;
      }
    }
    const resolved = await move(trx, dispute, 'resolved', now, {
      outcome: input.outcome,
      ledger_effect: effect,
      ledger_amount_micro_pay: effect === 'none' ? null : traded_micro_pay,
      ledger_transfer_id: transfer_id,
    });
    await logAction(trx, now, resolved, {
      action: 'resolved',
      from_status: dispute.status,
      actor,
      notes: input.notes ?? null,
      details: {
        outcome: input.outcome,
        ledger_effect: effect,
        amount_micro_pay: effect === 'none' ? null : traded_micro_pay,
        ledger_transfer_id: transfer_id,
      },
    });
    await auditAdmin(trx, now, actor, 'dispute.resolved', id, {
      outcome: input.outcome,
      ledger_effect: effect,
      ledger_transfer_id: transfer_id,
    });
    return { ...presentDispute(resolved), events: await loadEvents(trx, id) };
  });
}
