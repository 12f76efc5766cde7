/**
 * The append-only tables at the time of migration 0111: each is a log whose rows are facts (a ledger posting, an
 * operator action, a dispute step, a delivery attempt, a validator verdict). Nothing in the service updates or deletes
 * them; the database refuses it (trigger) and, on PostgreSQL, the service role has no UPDATE, DELETE or TRUNCATE on
 * them (src/db/roles.ts). Tables created later join with `select mpay_append_only('<table>')` in their migration.
 */
export const APPEND_ONLY_TABLES = [
  'ledger_transfers',
  'admin_audit_log',
  'dispute_events',
  'settlement_adjustments',
  'webhook_attempts',
  'receiver_confirm_audit',
  'sell_order_cash_leg_attempts',
  'events',
] as const;
