import { sql } from 'kysely';
import type { Db, Executor } from '../../db/database.ts';
import { ofMerchant } from '../../http/ownership.ts';
import type { MerchantScope } from '../../http/principal.ts';

export interface DailyPaymentStats {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  currency: string;
  count: number;
  completed_count: number;
  /** Sum of what succeeded payments received (completed, settled, and partly paid), minor units. */
  completed_amount_minor: number;
}

/** A partly paid payment succeeded for what it received (DESIGN 3b "Partly paid"). */
const SUCCEEDED = ['completed', 'settled', 'partially_paid'];

/** Per UTC day and currency since `from`: how many payments were created, how many succeeded and their volume (the dashboard's charts). */
export async function dailyPaymentStats(db: Db, scope: MerchantScope, from: Date): Promise<DailyPaymentStats[]> {
  const day = sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`;
  const rows = await db
    .selectFrom('payments')
    .select([
      day.as('day'),
      'currency',
      (eb) => eb.fn.countAll<string>().as('count'),
      sql<string>`count(*) filter (where status in (${sql.join(SUCCEEDED)}))`.as('completed_count'),
      sql<string>`coalesce(sum(case when status = 'partially_paid' then amount_received_minor else amount_minor end) filter (where status in (${sql.join(SUCCEEDED)})), 0)`.as(
        'completed_amount_minor',
      ),
    ])
    .where(ofMerchant(scope))
    .where('created_at', '>=', from)
    .groupBy([day, 'currency'])
    .orderBy('day')
    .orderBy('currency')
    .execute();
  return rows.map((row) => ({
    day: row.day,
    currency: row.currency,
    count: Number(row.count),
    completed_count: Number(row.completed_count),
    completed_amount_minor: Number(row.completed_amount_minor),
  }));
}

/** The payment id behind a merchant's order id in a mode (order ids are unique per merchant and mode), or null. */
export async function paymentIdByOrderId(db: Executor, scope: MerchantScope, order_id: string): Promise<string | null> {
  const row = await db
    .selectFrom('payments')
    .select('id')
    .where(ofMerchant(scope))
    .where('order_id', '=', order_id)
    .executeTakeFirst();
  return row?.id ?? null;
}
