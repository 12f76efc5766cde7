/**
 * The event types `POST /v1/sandbox/events` emits (events.ts), beside the payment events the five scenarios produce.
 * A file of its own so the CLI can list them without loading the server's modules.
 */
export const SYNTHETIC_EVENT_TYPES = [
  'sell_order.cash_leg_requested',
  'sell_order.completed',
  'sell_order.failed',
  'buy_order.created',
  'buy_order.matched',
  'buy_order.cancelled',
  'buy_order.expired',
  'gateway.dispute.opened',
  'gateway.dispute.escalated',
  'gateway.dispute.resolved',
  'pending_funds.validated',
  'pending_funds.confirmed',
  'pending_funds.failed',
  'pending_funds.expired',
  'settlement.completed',
  'settlement.failed',
  'settlement.adjusted',
] as const;
export type SyntheticEventType = (typeof SYNTHETIC_EVENT_TYPES)[number];

/** Payment event types and the scenario that produces each (`mpay sandbox trigger payment.completed`). */
export const PAYMENT_EVENT_SCENARIOS: Readonly<Record<string, string>> = {
  'payment.matched': 'matched_then_completed',
  'payment.completed': 'matched_then_completed',
  'payment.failed': 'matched_then_failed',
  'payment.expired': 'expired',
};
