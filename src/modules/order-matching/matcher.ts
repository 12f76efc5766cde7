import { sql } from 'kysely';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { emitBuyOrderEvent, lockPendingBuys, markBuysMatched, oldestPendingBuys } from '../buy-orders/service.ts';
import { accounts, type Ledger } from '../ledger/port.ts';
import { lockPendingSells, markSellsMatched, oldestPendingSells } from '../sell-orders/service.ts';

export interface MatcherMetrics {
  pairs: Counter;
  refused: Counter;
  mint_source_configured: Gauge;
}

export function createMatcherMetrics(registry: Registry, mint_source: string | undefined): MatcherMetrics {
  const metrics = {
    pairs: new Counter({ name: 'mpay_matcher_pairs_total', help: 'Sell/buy order pairs matched', registers: [registry] }),
    refused: new Counter({ name: 'mpay_matcher_refused_runs_total', help: 'Matcher passes refused because LEDGER_MINT_SOURCE_ACCOUNT is unset', registers: [registry] }),
    mint_source_configured: new Gauge({ name: 'mpay_matcher_mint_source_configured', help: '1 when LEDGER_MINT_SOURCE_ACCOUNT is set, 0 when the matcher refuses to run', registers: [registry] }),
  };
  metrics.mint_source_configured.set(mint_source ? 1 : 0);
  return metrics;
}

export interface MatcherDeps {
  db: Db;
  clock: Clock;
  ledger: Ledger;
  /** LEDGER_MINT_SOURCE_ACCOUNT: the issuance account name the buyers' PAY is minted from. Unset: the matcher refuses. */
  mint_source: string | undefined;
  logger?: Logger | undefined;
  metrics?: MatcherMetrics | undefined;
  /** Pairs per transaction. */
  batch_size?: number | undefined;
  /** Tells the cash-leg job that matched sell orders are waiting. */
  onMatched?: (() => void) | undefined;
}

export const MATCHER_REFUSAL = 'LEDGER_MINT_SOURCE_ACCOUNT is unset: the sell/buy order matcher refuses to run';

/** `/readyz` detail of the matcher. */
export function matcherReadiness(mint_source: string | undefined): { ok: boolean; detail: string } {
  return mint_source ? { ok: true, detail: `minting from issuance account "${mint_source}"` } : { ok: false, detail: MATCHER_REFUSAL };
}

const mintKey = (buy_order_id: string) => `buy_order:${buy_order_id}:mint`;
let last_refusal_logged_ms = 0;

/**
 * One matcher pass over both modes. FIFO: the oldest pending sell order takes the oldest pending buy order of the same
 * fiat currency and the same PAY amount (no partial fills in v1). Each batch is one transaction holding a
 * transaction-level advisory lock per mode, so with several workers exactly one matches at a time (the others return 0
 * at once) and the order of the book is kept; the rows are then locked and re-checked `pending`, so a cancel or an
 * expiry racing the matcher either wins before it (the pair is skipped) or waits and then loses with 409. The mint from
 * the mint-source account to the buyer (key `buy_order:<id>:mint`) is in the same transaction as the status changes.
 * Returns the number of pairs matched.
 */
export async function runMatcher(deps: MatcherDeps): Promise<number> {
  if (!deps.mint_source) {
    deps.metrics?.refused.inc();
    const now_ms = Date.now();
    // Loud but not a flood: once a minute per process.
    if (now_ms - last_refusal_logged_ms > 60_000) {
      last_refusal_logged_ms = now_ms;
      deps.logger?.error({ job: 'order-matcher' }, MATCHER_REFUSAL);
    }
    return 0;
  }
  let total = 0;
  for (const is_sandbox of [false, true]) total += await matchBatch(deps, deps.mint_source, is_sandbox);
  if (total > 0) {
    deps.metrics?.pairs.inc(total);
    deps.onMatched?.();
  }
  return total;
}

async function matchBatch(deps: MatcherDeps, mint_source: string, is_sandbox: boolean): Promise<number> {
  const batch_size = deps.batch_size ?? 200;
  const now = deps.clock.now();
  const mint_account = accounts.mintSource(mint_source, is_sandbox);
  return deps.db.transaction().execute(async (trx) => {
    const lock = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(hashtextextended(${`mpay:order-matcher:${is_sandbox ? 'sandbox' : 'live'}`}, 0)) as locked`.execute(trx);
    if (!lock.rows[0]?.locked) return 0;

    // Walk the sell book oldest first, window by window, until a batch of pairs is found: sells nobody can take yet
    // (no buy of their currency and amount) must not block younger ones behind them.
    const keyOf = (currency: string, amount: number) => `${currency}|${amount}`;
    const wanted = new Map<string, { fiat_currency: string; amount_micro_pay: number; count: number }>();
    const used = new Map<string, number>();
    const candidates: { sell_id: string; buy_id: string }[] = [];
    let after: { created_at: Date; id: string } | undefined;
    while (candidates.length < batch_size) {
      const sells = await oldestPendingSells(trx, is_sandbox, now, batch_size, after);
      if (sells.length === 0) break;
      const last = sells.at(-1)!;
      after = { created_at: last.created_at, id: last.id };
      for (const sell of sells) {
        const key = keyOf(sell.target_currency, sell.amount_micro_pay);
        const entry = wanted.get(key) ?? { fiat_currency: sell.target_currency, amount_micro_pay: sell.amount_micro_pay, count: 0 };
        entry.count += 1;
        wanted.set(key, entry);
      }
      const buys = await oldestPendingBuys(trx, is_sandbox, now, [...wanted.values()]);
      const queues = Map.groupBy(buys, (buy) => keyOf(buy.fiat_currency, buy.amount_micro_pay));
      for (const sell of sells) {
        if (candidates.length >= batch_size) break;
        const key = keyOf(sell.target_currency, sell.amount_micro_pay);
        const position = used.get(key) ?? 0;
        const buy = queues.get(key)?.[position];
        if (!buy) continue;
        used.set(key, position + 1);
        candidates.push({ sell_id: sell.id, buy_id: buy.id });
      }
      if (sells.length < batch_size) break;
    }
    if (candidates.length === 0) return 0;

    // Lock in one statement per table; rows a cancel or sweep took in the meantime drop out (their partner waits for the next pass).
    const locked_sells = new Map((await lockPendingSells(trx, candidates.map((c) => c.sell_id))).map((row) => [row.id, row]));
    const locked_buys = new Map((await lockPendingBuys(trx, candidates.map((c) => c.buy_id))).map((row) => [row.id, row]));
    const pairs: { sell_order_id: string; buy_order_id: string; mint_transfer_id: string }[] = [];
    for (const candidate of candidates) {
      const sell = locked_sells.get(candidate.sell_id);
      const buy = locked_buys.get(candidate.buy_id);
      if (!sell || !buy) continue;
      const mint = await deps.ledger.transfer(
        {
          key: mintKey(buy.id),
          kind: 'mint',
          debit_account: mint_account,
          credit_account: accounts.merchantAvailable(buy.merchant_id, is_sandbox),
          amount_micro_pay: buy.amount_micro_pay,
          memo: `buy order ${buy.id} matched with sell order ${sell.id}`,
        },
        { trx },
      );
      pairs.push({ sell_order_id: sell.id, buy_order_id: buy.id, mint_transfer_id: mint.id });
    }
    await markSellsMatched(trx, pairs, mint_account, now);
    for (const buy of await markBuysMatched(trx, pairs, now)) await emitBuyOrderEvent(trx, now, buy, 'buy_order.matched');
    const matched = pairs.length;
    return matched;
  });
}
