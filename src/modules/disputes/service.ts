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
import { holdCashLeg, liftCashLegHold, lockSellOrderForDispute } from '../sell-orders/disputed.ts';
import { fillsWithBuyers } from '../buy-orders/service.ts';
import { CASH_LEG_CODES, decodeReceipt } from '../validators/receipt.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import { applyResolution, fillsMovedEarlier } from './resolution.ts';
import type { FillReversal } from '../buy-orders/ledger.ts';
import { orderDeliveriesAfter } from '../webhooks/dispatcher.ts';
import type { SellOrderRow } from '../sell-orders/tables.ts';
import type { DisputeAction, DisputeKind, DisputeOutcome, DisputeRow, DisputeStatus } from './tables.ts';
import { present } from '../../lib/assert.ts';
import type { DisputeView } from './schema.ts';
import { presentDispute } from './present.ts';
import { loadEvents } from './queries.ts';
import {
  buyerDisputeBadState,
  disputeNotResolvable,
  refundPayoutConfirmed,
  unresolvedDisputeExists,
} from './errors.ts';

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
  disputeEvidenceOf,
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
    // A buyer's dispute is the buyer's too: it gets the same events as the seller.
    if (dispute.opened_by_merchant_id !== null && dispute.opened_by_merchant_id !== dispute.merchant_id)
      await recordEvent(trx, at, {
        merchant_id: dispute.opened_by_merchant_id,
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

/** Who opens a dispute: the seller or a buyer (with its merchant), or the gateway. */
type Opener = { opened_by: 'seller' | 'buyer'; merchant_id: string } | { opened_by: 'gateway' };
const GATEWAY: Opener = { opened_by: 'gateway' };

async function insertDispute(
  trx: Trx,
  at: Date,
  order: SellOrderRow,
  kind: DisputeKind,
  notes: string,
  actor: Actor,
  opener: Opener,
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
      opened_by: opener.opened_by,
      opened_by_merchant_id: opener.opened_by === 'gateway' ? null : opener.merchant_id,
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
  if (dispute) {
    // While the parties are heard the cash leg is held: the sweeper does not fail it.
    await holdCashLeg(trx, order.id, dispute.id);
    await logAction(trx, at, dispute, {
      action: 'opened',
      from_status: null,
      actor,
      notes,
      details: { kind, opened_by: opener.opened_by, sell_order_status: order.status, ...details },
    });
  }
  return dispute;
}

export interface NewMerchantDispute {
  sell_order_id: string;
  notes: string;
  /** The opener's evidence (a buyer's own payment slip), base64 with its content type. */
  evidence_base64?: string | undefined;
  content_type?: string | undefined;
}

/**
 * The party a merchant opens a dispute as: the sell order's owner (`seller`, any status), or a merchant whose buy order
 * filled it (`buyer`, while its cash leg is in flight or after it failed); anybody else is 403
 * GATEWAY_DISPUTE_CROSS_MERCHANT, another mode's or an unknown order 404.
 */
async function openerOf(trx: Trx, scope: MerchantScope, order: SellOrderRow | undefined): Promise<Opener> {
  if (order && order.is_sandbox === scope.is_sandbox && order.merchant_id !== scope.merchant_id) {
    const fills = await fillsWithBuyers(trx, order.id);
    if (fills.some((fill) => fill.buyer_merchant_id === scope.merchant_id)) {
      if (order.status !== 'cash_leg_in_flight' && order.status !== 'failed') throw buyerDisputeBadState(order.status);
      return { opened_by: 'buyer', merchant_id: scope.merchant_id };
    }
  }
  const own = owned(order, scope, OWNERSHIP.disputed_sell_order);
  if (own.refund_id !== null && own.status === 'completed') throw refundPayoutConfirmed();
  return { opened_by: 'seller', merchant_id: own.merchant_id };
}

/**
 * POST /v1/merchant-disputes: kind `merchant_dispute`, status `opened`, `gateway.dispute.opened` (to the seller, and to
 * the buyer who opened it); no ledger operation. The opener's evidence is kept with it. Its sell order's cash leg is
 * held until the resolution.
 */
export async function openMerchantDispute(
  deps: DisputesDeps,
  trx: Trx,
  scope: MerchantScope,
  user_id: string,
  input: NewMerchantDispute,
): Promise<DisputeView> {
  const evidence = decodeEvidence(input);
  const order = await sellOrderForDispute(trx, input.sell_order_id);
  const opener = await openerOf(trx, scope, order);
  const disputed = present(order, 'openerOf answers only for an existing sell order');
  const now = deps.clock.now();
  const dispute = await insertDispute(
    trx,
    now,
    disputed,
    'merchant_dispute',
    input.notes,
    { actor_user_id: user_id, actor_role: 'merchant' },
    opener,
    evidence ? { evidence: { content_type: evidence.content_type, sha256: evidence.sha256 } } : {},
  );
  if (!dispute) throw unresolvedDisputeExists();
  if (evidence)
    await trx
      .insertInto('dispute_evidence')
      .values({ dispute_id: dispute.id, ...evidence, created_at: now })
      .execute();
  return presentDispute(dispute);
}

/** The optional evidence: both fields or neither; checked like every receipt (one pipeline, validators/receipt.ts). */
function decodeEvidence(input: NewMerchantDispute): { content_type: string; sha256: string; bytes: Uint8Array } | null {
  if (input.evidence_base64 === undefined && input.content_type === undefined) return null;
  if (input.evidence_base64 === undefined || input.content_type === undefined)
    throw new AppError('VALIDATION_ERROR', 'evidence_base64 and content_type go together', [
      {
        field: input.evidence_base64 === undefined ? 'body.evidence_base64' : 'body.content_type',
        message: 'is required with the other',
      },
    ]);
  const bytes = decodeReceipt(
    { receipt_base64: input.evidence_base64, content_type: input.content_type },
    CASH_LEG_CODES,
    {
      data_field: 'body.evidence_base64',
    },
  );
  return { content_type: input.content_type.toLowerCase(), sha256: sha256Hex(bytes), bytes };
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
    GATEWAY,
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
    const dispute = await insertDispute(trx, now, order, 'chargeback', input.notes, actor, GATEWAY, { reference });
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

/** investigating or escalated -> resolved: PAY follows the fiat (resolution.ts), the hold is lifted; `gateway.dispute.resolved`. */
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
    const order = await lockSellOrderForDispute(trx, dispute.sell_order_id);
    const moved_earlier = await fillsMovedEarlier(trx, order.id, dispute.id);
    const applied = await applyResolution(deps.ledger, trx, dispute, order, input.outcome, moved_earlier, now);
    await liftCashLegHold(trx, order.id, dispute.id);
    const effect = applied.effect;
    const transfer_id = applied.transfer_id;
    const resolved = await move(trx, dispute, 'resolved', now, {
      outcome: input.outcome,
      ledger_effect: effect,
      ledger_amount_micro_pay: applied.amount_micro_pay,
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
        amount_micro_pay: applied.amount_micro_pay,
        ledger_transfer_id: transfer_id,
        moves: applied.moves,
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
