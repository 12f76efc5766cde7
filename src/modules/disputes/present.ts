import { iso } from '../../http/schemas.ts';
import type { DisputeEventView, DisputeView } from './schema.ts';
import type { DisputeEventRow, DisputeRow } from './tables.ts';

/** A dispute as the API shows it; a resolution only once there is an outcome. */
export function presentDispute(row: DisputeRow): DisputeView {
  return {
    id: row.id,
    merchant_id: row.merchant_id,
    is_sandbox: row.is_sandbox,
    sell_order_id: row.sell_order_id,
    kind: row.kind,
    status: row.status,
    notes: row.notes,
    opened_by_user_id: row.opened_by_user_id,
    opened_by: row.opened_by,
    opened_by_merchant_id: row.opened_by_merchant_id,
    outcome: row.outcome,
    resolution:
      row.outcome === null
        ? null
        : {
            outcome: row.outcome,
            ledger_effect: row.ledger_effect ?? 'none',
            amount_micro_pay: row.ledger_amount_micro_pay,
            ledger_transfer_id: row.ledger_transfer_id,
          },
    created_at: iso(row.created_at),
    investigating_at: iso(row.investigating_at),
    escalated_at: iso(row.escalated_at),
    resolved_at: iso(row.resolved_at),
  };
}

export function presentEvent(row: DisputeEventRow): DisputeEventView {
  return {
    id: row.id,
    seq: row.seq,
    action: row.action,
    from_status: row.from_status,
    to_status: row.to_status,
    actor_user_id: row.actor_user_id,
    actor_role: row.actor_role,
    notes: row.notes,
    details: row.details,
    created_at: iso(row.created_at),
  };
}
