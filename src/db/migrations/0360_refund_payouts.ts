import type { Kysely } from 'kysely';
import { runStatements } from '../migrate.ts';

/**
 * A refund paid from the merchant's PAY (funding `pay_balance`, DESIGN 3c) is paid out through the payout network as a
 * sell order whose payout destination is the buyer's. `refund_id` names that refund: the order's reserve came from
 * the refund hold (not from available), and its end decides the refund. One order per refund at most.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table sell_orders add column refund_id uuid;
    create unique index sell_orders_refund_id on sell_orders (refund_id) where refund_id is not null;
  `,
  );
}
