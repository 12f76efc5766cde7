import { sql } from 'kysely';
import { Type, type Static } from 'typebox';
import type { Db, Executor } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { present } from '../../lib/assert.ts';

/**
 * Why every unit of PAY exists: the journal's mints and burns grouped by the path that made them. A cause is read off
 * the transfer's key and its issuance account, which every path sets in one place:
 * - `seller_funding`: `seller:<id>:funding`, a live seller's liquidity backed at its rate, and an operator's later
 *   funding `seller:<id>:funding:<key>` (world account);
 * - `payment_synthetic_seller`: `payment:<id>:leg:<n>:fund`, sandbox sellers minted at payment completion;
 * - `pending_funds`: a receiver-confirmed pending-funds row (key = row id, world account);
 * - `buy_order_fill`: `buy_order:<id>:fill:<sell id>` (or the older `buy_order:<id>:mint`), the buyer's PAY, its
 *   reversal, and the collections of a reversal's shortfall (`shortfall:<id>:from:<credit>`, burned to the mint source);
 * - `sell_order_completion`: the seller's reserve burned when its cash leg is confirmed (key = sell order id);
 * - `adjustment`: operator adjustments (`issuance:adjustments`); `dispute`: resolutions (`issuance:disputes`);
 * - `other`: anything else (should stay empty; it is shown so that nothing is hidden).
 * Payment completion itself only moves PAY (seller -> merchant) and never changes the supply.
 */
export const SUPPLY_CAUSES = [
  'seller_funding',
  'payment_synthetic_seller',
  'pending_funds',
  'buy_order_fill',
  'sell_order_completion',
  'adjustment',
  'dispute',
  'other',
] as const;
export type SupplyCause = (typeof SUPPLY_CAUSES)[number];

const CauseRow = Type.Object({
  cause: Type.String({
    enum: [...SUPPLY_CAUSES],
    description:
      'seller_funding, payment_synthetic_seller, pending_funds, buy_order_fill, sell_order_completion, adjustment, dispute or other',
  }),
  minted_micro_pay: Type.Integer(),
  burned_micro_pay: Type.Integer(),
  net_micro_pay: Type.Integer({ description: 'minted - burned: PAY in circulation because of this cause' }),
  mints: Type.Integer(),
  burns: Type.Integer(),
});
const ModeSupply = Type.Object({
  minted_micro_pay: Type.Integer(),
  burned_micro_pay: Type.Integer(),
  circulation_micro_pay: Type.Integer({
    description: 'minted - burned; equals the sum of every non-issuance balance of the mode (see /admin/ledger/verify)',
  }),
  causes: Type.Array(CauseRow),
});
export const SupplyReportSchema = Type.Object({ live: ModeSupply, sandbox: ModeSupply });
export type SupplyReport = Static<typeof SupplyReportSchema>;

const CAUSE_SQL = sql<SupplyCause>`case
  when key like 'seller:%:funding' or key like 'seller:%:funding:%' then 'seller_funding'
  when key like 'payment:%:fund' then 'payment_synthetic_seller'
  when key like 'buy_order:%' or (key like 'shortfall:%' and kind = 'burn') then 'buy_order_fill'
  when debit_account like '%:issuance:adjustments' or credit_account like '%:issuance:adjustments' then 'adjustment'
  when debit_account like '%:issuance:disputes' or credit_account like '%:issuance:disputes' then 'dispute'
  when kind = 'mint' and debit_account like '%:issuance:world' then 'pending_funds'
  when kind = 'burn' then 'sell_order_completion'
  else 'other' end`;

/** The supply report, from the journal in one statement (the in-process ledger's tables). */
export async function ledgerSupply(executor: Executor): Promise<SupplyReport> {
  const rows = await sql<{ mode: string; cause: SupplyCause; kind: 'mint' | 'burn'; transfers: string; total: string }>`
    select split_part(debit_account, ':', 1) as mode, ${CAUSE_SQL} as cause, kind, count(*)::text as transfers, sum(amount_micro_pay)::text as total
    from ledger_transfers where kind in ('mint', 'burn')
    group by 1, 2, 3`.execute(executor);
  const report: SupplyReport = { live: emptyMode(), sandbox: emptyMode() };
  for (const row of rows.rows) {
    const mode = report[row.mode === 'sandbox' ? 'sandbox' : 'live'];
    const cause = present(
      mode.causes.find((entry) => entry.cause === row.cause),
      `supply cause ${row.cause} is one of CAUSE_SQL's`,
    );
    const total = Number(BigInt(row.total));
    if (row.kind === 'mint') {
      cause.minted_micro_pay += total;
      cause.mints += Number(row.transfers);
      mode.minted_micro_pay += total;
    } else {
      cause.burned_micro_pay += total;
      cause.burns += Number(row.transfers);
      mode.burned_micro_pay += total;
    }
  }
  for (const mode of [report.live, report.sandbox]) {
    for (const cause of mode.causes) cause.net_micro_pay = cause.minted_micro_pay - cause.burned_micro_pay;
    mode.circulation_micro_pay = mode.minted_micro_pay - mode.burned_micro_pay;
  }
  return report;
}

function emptyMode(): SupplyReport['live'] {
  return {
    minted_micro_pay: 0,
    burned_micro_pay: 0,
    circulation_micro_pay: 0,
    causes: SUPPLY_CAUSES.map((cause) => ({
      cause,
      minted_micro_pay: 0,
      burned_micro_pay: 0,
      net_micro_pay: 0,
      mints: 0,
      burns: 0,
    })),
  };
}

/**
 * Opens issuance accounts (balance 0) at start-up, so the default mint source exists from the first start and shows
 * in the ledger; idempotent. In-process ledger only (an HTTP ledger opens accounts on first use).
 */
export async function openIssuanceAccounts(db: Db, clock: Clock, names: readonly string[]): Promise<void> {
  const now = clock.now();
  await db
    .insertInto('ledger_accounts')
    .values(names.map((name) => ({ name, non_negative: false, balance_micro_pay: 0, created_at: now })))
    .onConflict((conflict) => conflict.column('name').doNothing())
    .execute();
}
