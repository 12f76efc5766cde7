import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { notFound } from '../../lib/errors.ts';
import { accounts, type Ledger } from '../ledger/port.ts';
import { unconfirmedFillsMicroPay } from '../buy-orders/ledger.ts';
import { outstandingShortfallMicroPay } from '../ledger/shortfalls.ts';
import { netObligationMicroPay } from '../pending-funds/service.ts';
import { releasedReserveMicroPaySince } from '../sell-orders/ledger.ts';
import { notOwnBalance } from './errors.ts';
import type { BalanceView, DeficitView } from './schema.ts';

export type { BalanceView, DeficitView } from './schema.ts';

export interface BalanceDeps {
  db: Db;
  clock: Clock;
  ledger: Ledger;
  apr_bps: number;
  entry_fee_usd: string;
  grace_days: number;
  threshold_bps: number;
}

const DAY_MS = 24 * 3600_000;
export const TRAILING_WINDOW_MS = 30 * DAY_MS;

/**
 * deficit = max(0, threshold - (available + buffer - net obligation)) + shortfall, where the shortfall is PAY taken
 * back after the merchant had spent it (a failed cash leg's fill, a dispute's resolution) and not yet collected from its
 * later credits: owed, never an overdraft.
 */
export function deficitMicroPay(
  threshold: number,
  available: number,
  buffer: number,
  net_obligation: number,
  shortfall = 0,
): number {
  return Math.max(0, threshold - (available + buffer - net_obligation)) + shortfall;
}

/** Whole days left of the grace period since the deficit began; null without a deficit. */
export function countdownDays(
  deficit: number,
  deficit_since: Date | null,
  now: Date,
  grace_days: number,
): number | null {
  if (deficit <= 0) return null;
  const elapsed_days = deficit_since ? Math.floor((now.getTime() - deficit_since.getTime()) / DAY_MS) : 0;
  return Math.max(0, grace_days - elapsed_days);
}

/**
 * The balance of one merchant and mode. A merchant whose ledger has never held PAY (neither account exists) has
 * no balance row: 404. The ledger being down is LEDGER_UNAVAILABLE (502).
 */
export async function readBalance(deps: BalanceDeps, merchant_id: string, is_sandbox: boolean): Promise<DeficitView> {
  const available_account = accounts.merchantAvailable(merchant_id, is_sandbox);
  const buffer_account = accounts.merchantBuffer(merchant_id, is_sandbox);
  const hold_account = accounts.merchantRefundHold(merchant_id, is_sandbox);
  const balances = await deps.ledger.balances([available_account, buffer_account, hold_account]);
  const available = balances.get(available_account) ?? null;
  const buffer = balances.get(buffer_account) ?? null;
  if (available === null && buffer === null) throw notFound('PAY balance of this merchant');
  const [net_obligation, shortfall, unconfirmed, state] = await Promise.all([
    netObligationMicroPay(deps.db, merchant_id, is_sandbox),
    outstandingShortfallMicroPay(deps.db, available_account),
    unconfirmedFillsMicroPay(deps.db, merchant_id, is_sandbox),
    deps.db
      .selectFrom('merchant_balance_state')
      .selectAll()
      .where('merchant_id', '=', merchant_id)
      .where('is_sandbox', '=', is_sandbox)
      .executeTakeFirst(),
  ]);
  const threshold = state?.buffer_threshold_micro_pay ?? 0;
  const deficit = deficitMicroPay(threshold, available ?? 0, buffer ?? 0, net_obligation, shortfall);
  return {
    merchant_id,
    available_micro_pay: available ?? 0,
    buffer_micro_pay: buffer ?? 0,
    refund_hold_micro_pay: balances.get(hold_account) ?? 0,
    net_obligation_micro_pay: net_obligation,
    deficit_micro_pay: deficit,
    unconfirmed_fills_micro_pay: unconfirmed,
    shortfall_micro_pay: shortfall,
    apr_bps: deps.apr_bps,
    entry_fee_usd: deps.entry_fee_usd,
    countdown_days: countdownDays(deficit, state?.deficit_since ?? null, deps.clock.now(), deps.grace_days),
    buffer_threshold_micro_pay: threshold,
    buffer_last_recalc_at: state?.buffer_last_recalc_at?.toISOString() ?? null,
    trailing_30d_volume_micro_pay: state?.trailing_30d_volume_micro_pay ?? 0,
  };
}

/** `GET /v1/merchants/{id}/balance`: the caller's own live balance only (403 FORBIDDEN for another merchant). */
export async function merchantBalance(
  deps: BalanceDeps,
  caller: { merchant_id: string; is_sandbox: boolean },
  merchant_id: string,
): Promise<BalanceView> {
  if (caller.merchant_id.toLowerCase() !== merchant_id.toLowerCase()) throw notOwnBalance();
  const view = await readBalance(deps, caller.merchant_id, caller.is_sandbox);
  return {
    available_micro_pay: view.available_micro_pay,
    buffer_micro_pay: view.buffer_micro_pay,
    refund_hold_micro_pay: view.refund_hold_micro_pay,
    net_obligation_micro_pay: view.net_obligation_micro_pay,
    deficit_micro_pay: view.deficit_micro_pay,
    unconfirmed_fills_micro_pay: view.unconfirmed_fills_micro_pay,
    shortfall_micro_pay: view.shortfall_micro_pay,
    apr_bps: view.apr_bps,
    entry_fee_usd: view.entry_fee_usd,
    countdown_days: view.countdown_days,
  };
}

/**
 * Worker pass (hourly): for every merchant, the trailing 30-day volume is the PAY credited to its live available
 * account in the window, less released sell-order reserves; the buffer threshold is that volume times BALANCE_BUFFER_THRESHOLD_BPS. The pass also
 * records when a deficit began (for `countdown_days`) and clears it when the deficit is gone. Returns 0 so the
 * scheduler waits for the next interval.
 */
export async function recalcBufferThresholds(deps: BalanceDeps): Promise<number> {
  const now = deps.clock.now();
  const merchants = await deps.db.selectFrom('merchants').select('id').execute();
  for (const { id } of merchants) {
    const available_account = accounts.merchantAvailable(id, false);
    const since = new Date(now.getTime() - TRAILING_WINDOW_MS);
    // Credits to available, less the merchant's own PAY coming back from released sell-order reserves (a cancel/expire
    // cycle is no volume and must not raise the threshold).
    const volume =
      (await deps.ledger.creditedSince(available_account, since)) -
      (await releasedReserveMicroPaySince(deps.db, id, false, since));
    const threshold = Number((BigInt(volume) * BigInt(deps.threshold_bps)) / 10_000n);
    const balances = await deps.ledger.balances([available_account, accounts.merchantBuffer(id, false)]);
    const net_obligation = await netObligationMicroPay(deps.db, id, false);
    const shortfall = await outstandingShortfallMicroPay(deps.db, available_account);
    const deficit = deficitMicroPay(
      threshold,
      balances.get(available_account) ?? 0,
      balances.get(accounts.merchantBuffer(id, false)) ?? 0,
      net_obligation,
      shortfall,
    );
    await deps.db
      .insertInto('merchant_balance_state')
      .values({
        merchant_id: id,
        is_sandbox: false,
        buffer_threshold_micro_pay: threshold,
        trailing_30d_volume_micro_pay: volume,
        buffer_last_recalc_at: now,
        deficit_since: deficit > 0 ? now : null,
      })
      .onConflict((conflict) =>
        conflict.columns(['merchant_id', 'is_sandbox']).doUpdateSet((eb) => ({
          buffer_threshold_micro_pay: threshold,
          trailing_30d_volume_micro_pay: volume,
          buffer_last_recalc_at: now,
          // keep the first day of an ongoing deficit; clear it once the deficit is gone
          deficit_since: deficit > 0 ? eb.fn.coalesce('merchant_balance_state.deficit_since', eb.val(now)) : null,
        })),
      )
      .execute();
  }
  return 0;
}
