import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Db, Trx } from '../../db/database.ts';
import { isDatabaseUnavailable } from '../../db/resilience.ts';
import type { Clock } from '../../lib/clock.ts';
import { settleBatch } from '../../lib/group-commit.ts';
import {
  applyBuyFills,
  emitBuyOrderEvents,
  fillCounts,
  insertFills,
  pendingBuysWindow,
} from '../buy-orders/service.ts';
import { merchantNames } from '../merchants/service.ts';
import type { BuyOrderRow, NewFill } from '../buy-orders/tables.ts';
import { accounts, LEDGER_BATCH_MAX, type Ledger, type TransferResult } from '../ledger/port.ts';
import { applySellFills, eligibleSellsWindow } from '../sell-orders/service.ts';
import type { SellOrderRow } from '../sell-orders/tables.ts';
import { present } from '../../lib/assert.ts';

export interface MatcherMetrics {
  pairs: Counter;
  refused: Counter;
  mint_source_configured: Gauge;
}

export function createMatcherMetrics(registry: Registry, mint_source: string | undefined): MatcherMetrics {
  const metrics = {
    pairs: new Counter({
      name: 'mpay_matcher_pairs_total',
      help: 'Sell/buy order pairs matched',
      registers: [registry],
    }),
    refused: new Counter({
      name: 'mpay_matcher_refused_runs_total',
      help: 'Matcher passes refused because LEDGER_MINT_SOURCE_ACCOUNT is unset',
      registers: [registry],
    }),
    mint_source_configured: new Gauge({
      name: 'mpay_matcher_mint_source_configured',
      help: '1 when LEDGER_MINT_SOURCE_ACCOUNT is set, 0 when the matcher refuses to run',
      registers: [registry],
    }),
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
  return mint_source
    ? { ok: true, detail: `minting from issuance account "${mint_source}"` }
    : { ok: false, detail: MATCHER_REFUSAL };
}

/** One mint per (buy, sell) pair: a pair fills at most once (a fill exhausts one of the two). */
export const fillMintKey = (buy_order_id: string, sell_order_id: string) =>
  `buy_order:${buy_order_id}:fill:${sell_order_id}`;
let last_refusal_logged_ms = 0;

/**
 * One matcher pass over both modes, price-time priority (docs/payouts.md): buy orders are served oldest first;
 * each fills against the oldest pending sell orders of its fiat currency whose asking price (target_fiat_amount per
 * PAY) is at or below its own (fiat_amount per PAY), compared exactly by cross-multiplication, partially where the
 * amounts differ. A fill is priced at the sell's asking price, rounded half up and capped at the buyer's bid rounded
 * down; a fill worth 0 is not made (fillFiatAmount). Each batch is one transaction holding a transaction-level
 * advisory lock per mode (with several workers exactly one matches at a time, the others return 0 at once); the rows
 * are locked as they are read (SKIP LOCKED), so a cancel or expiry racing the matcher either wins before it (the row
 * is skipped) or waits and then finds the order filled. Every fill's mint from the mint-source account to the buyer
 * (key `buy_order:<buy>:fill:<sell>`) is in the same transaction as the fill rows and the status changes.
 * Returns the number of fills made.
 */
export async function runMatcher(deps: MatcherDeps): Promise<number> {
  deps.metrics?.mint_source_configured.set(deps.mint_source ? 1 : 0);
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

/** An order's fill totals as written: its row's, then each write of this pass that went through. */
interface Written {
  filled_micro_pay: number;
  filled_fiat_amount: number;
  /** The order on the other side of its first fill. */
  first_id: string | null;
}
interface BookOrder<Row> {
  row: Row;
  /** Filled once the pairs planned so far are written. */
  planned_micro_pay: number;
  written: Written;
}
type BookBuy = BookOrder<BuyOrderRow>;
type BookSell = BookOrder<SellOrderRow>;
interface PlannedFill {
  buy: BookBuy;
  sell: BookSell;
  amount_micro_pay: number;
}

function bookOrder<Row extends { filled_micro_pay: number; filled_fiat_amount: number }>(
  row: Row,
  first_id: string | null,
): BookOrder<Row> {
  const { filled_micro_pay, filled_fiat_amount } = row;
  return { row, planned_micro_pay: filled_micro_pay, written: { filled_micro_pay, filled_fiat_amount, first_id } };
}

/** ask <= bid, exactly: sell.target_fiat / sell.amount <= buy.fiat / buy.amount, cross-multiplied in BigInt. */
export function priceAcceptable(
  sell: { target_fiat_amount: number; amount_micro_pay: number },
  buy: { fiat_amount: number; amount_micro_pay: number },
): boolean {
  return (
    BigInt(sell.target_fiat_amount) * BigInt(buy.amount_micro_pay) <=
    BigInt(buy.fiat_amount) * BigInt(sell.amount_micro_pay)
  );
}

/** The higher of two bids (fiat per PAY), exactly. */
const higherBid = (a: BuyOrderRow, b: BuyOrderRow) =>
  BigInt(a.fiat_amount) * BigInt(b.amount_micro_pay) >= BigInt(b.fiat_amount) * BigInt(a.amount_micro_pay) ? a : b;

/**
 * Fiat of a fill (docs/payouts.md, "Fills round fairly"): its PAY at the sell's asking price rounded to the nearest
 * minor unit (half up), never more than the buyer's own bid for that PAY rounded down. 0 means the fill is worth
 * nothing at these prices and is not made (its cash leg could never be proved). A sell's fills may then differ from its
 * target_fiat_amount by at most one minor unit each; no fill takes a remainder, so none charges above its bid.
 */
export function fillFiatAmount(
  sell: { target_fiat_amount: number; amount_micro_pay: number },
  buy: { fiat_amount: number; amount_micro_pay: number },
  amount_micro_pay: number,
): number {
  const pay = BigInt(amount_micro_pay);
  const ask_numerator = BigInt(sell.target_fiat_amount) * pay;
  const ask_denominator = BigInt(sell.amount_micro_pay);
  const at_ask = (2n * ask_numerator + ask_denominator) / (2n * ask_denominator);
  const bid_cap = (BigInt(buy.fiat_amount) * pay) / BigInt(buy.amount_micro_pay);
  return Number(at_ask < bid_cap ? at_ask : bid_cap);
}

/** One pass of one mode: its transaction, and what its writes need. */
interface MatcherPass {
  deps: MatcherDeps;
  trx: Trx;
  is_sandbox: boolean;
  now: Date;
  mint_account: string;
}

/**
 * A pass walks the book inside one transaction (its rows locked as they are read), so it is not a batcher of submitted
 * items: it plans its pairs itself, then writes them under GroupCommit's failure rule (settleBatch). All together
 * first; if that fails, each pair alone, in plan order, each in a savepoint of the same transaction, so a pair the
 * ledger or the database refuses is logged and left for the next pass while the others are filled.
 */
async function matchBatch(deps: MatcherDeps, mint_source: string, is_sandbox: boolean): Promise<number> {
  const batch_size = deps.batch_size ?? 200;
  const now = deps.clock.now();
  const mint_account = accounts.mintSource(mint_source, is_sandbox);
  return deps.db.transaction().execute(async (trx) => {
    const lock = await sql<{
      locked: boolean;
    }>`select pg_try_advisory_xact_lock(hashtextextended(${`mpay:order-matcher:${is_sandbox ? 'sandbox' : 'live'}`}, 0)) as locked`.execute(
      trx,
    );
    if (!lock.rows[0]?.locked) return 0;
    const planned = await planFills(trx, is_sandbox, now, batch_size);
    if (planned.length === 0) return 0;
    const pass: MatcherPass = { deps, trx, is_sandbox, now, mint_account };
    const outcomes = await settleBatch(
      planned,
      async (pairs) => {
        await inSavepoint(trx, () => writeFills(pass, pairs));
        return pairs;
      },
      { refusesEveryItem: isDatabaseUnavailable },
    );
    let written = 0;
    for (const [index, outcome] of outcomes.entries()) {
      if (outcome.status === 'fulfilled') written++;
      else {
        const pair = present(planned[index], 'each outcome answers a planned pair');
        deps.logger?.error(
          { err: outcome.reason, job: 'order-matcher', buy_order_id: pair.buy.row.id, sell_order_id: pair.sell.row.id },
          'a matched pair could not be written; the rest of its batch went ahead',
        );
      }
    }
    return written;
  });
}

const SAVEPOINT = sql.raw('mpay_matcher_write');

/** Runs `write` in a savepoint of `trx`: if it fails, what it wrote is undone and the transaction goes on. */
async function inSavepoint(trx: Trx, write: () => Promise<void>): Promise<void> {
  await sql`savepoint ${SAVEPOINT}`.execute(trx);
  try {
    await write();
  } catch (error) {
    await sql`rollback to savepoint ${SAVEPOINT}`.execute(trx);
    await sql`release savepoint ${SAVEPOINT}`.execute(trx);
    throw error;
  }
  await sql`release savepoint ${SAVEPOINT}`.execute(trx);
}

/**
 * Plans in memory over windows of the books. Buys are walked oldest first (window by window, so buys nobody can fill
 * yet never block younger ones); for each window and currency the eligible sells are walked oldest first, and within
 * each sell window every buy (oldest first) takes what it may: the same fills as serving each buy completely before
 * the next one, in far fewer queries.
 */
async function planFills(trx: Trx, is_sandbox: boolean, now: Date, batch_size: number): Promise<PlannedFill[]> {
  const window = Math.max(batch_size, 100);
  const planned: PlannedFill[] = [];
  const sells = new Map<string, BookSell>();
  let buy_after: { created_at: Date; id: string } | undefined;
  plan: while (planned.length < batch_size) {
    const buy_rows = await pendingBuysWindow(trx, is_sandbox, now, window, buy_after);
    if (buy_rows.length === 0) break;
    const last_buy = present(buy_rows.at(-1), 'a non-empty window has a last buy');
    buy_after = { created_at: last_buy.created_at, id: last_buy.id };
    for (const [currency, rows] of Map.groupBy(buy_rows, (row) => row.fiat_currency)) {
      let open = rows.map((row) => bookOrder(row, row.matched_sell_order_id));
      let sell_after: { created_at: Date; id: string } | undefined;
      while (open.length > 0) {
        const best = open.map((buy) => buy.row).reduce(higherBid);
        const sell_rows = await eligibleSellsWindow(trx, { is_sandbox, currency, now }, best, window, sell_after);
        if (sell_rows.length === 0) break;
        const last_sell = present(sell_rows.at(-1), 'a non-empty window has a last sell');
        sell_after = { created_at: last_sell.created_at, id: last_sell.id };
        const window_sells = sell_rows.map((row) => {
          const known = sells.get(row.id) ?? bookOrder(row, row.matched_buy_order_id);
          sells.set(row.id, known);
          return known;
        });
        for (const buy of open) {
          for (const sell of window_sells) {
            const buy_left = buy.row.amount_micro_pay - buy.planned_micro_pay;
            if (buy_left === 0) break;
            const sell_left = sell.row.amount_micro_pay - sell.planned_micro_pay;
            // A merchant never buys its own PAY: it would mint PAY against a cash leg it pays itself.
            if (sell_left === 0 || sell.row.merchant_id === buy.row.merchant_id || !priceAcceptable(sell.row, buy.row))
              continue;
            const amount_micro_pay = Math.min(buy_left, sell_left);
            // A fill worth less than one minor unit at these prices is not made: nobody could prove its cash leg.
            if (fillFiatAmount(sell.row, buy.row, amount_micro_pay) === 0) continue;
            planned.push({ buy, sell, amount_micro_pay });
            sell.planned_micro_pay += amount_micro_pay;
            buy.planned_micro_pay += amount_micro_pay;
            if (planned.length >= batch_size) break plan;
          }
        }
        open = open.filter((buy) => buy.planned_micro_pay < buy.row.amount_micro_pay);
        if (sell_rows.length < window) break;
      }
    }
    if (buy_rows.length < window) break;
  }
  return planned;
}

/** `order`'s totals once one more fill of it is written (`totals` holds those of the fills before it in this write). */
function addFill<Row>(
  totals: Map<BookOrder<Row>, Written>,
  order: BookOrder<Row>,
  fill: { amount_micro_pay: number; fiat_amount: number },
  other_id: string,
): void {
  const before = totals.get(order) ?? order.written;
  totals.set(order, {
    filled_micro_pay: before.filled_micro_pay + fill.amount_micro_pay,
    filled_fiat_amount: before.filled_fiat_amount + fill.fiat_amount,
    first_id: before.first_id ?? other_id,
  });
}

/** The fill totals an order update writes, and whether they fill the order in full. */
function totalsOf<Row extends { id: string; amount_micro_pay: number }>(order: BookOrder<Row>, totals: Written) {
  return {
    filled_micro_pay: totals.filled_micro_pay,
    filled_fiat_amount: totals.filled_fiat_amount,
    first_id: present(totals.first_id, `touched order ${order.row.id} has a first fill`),
    complete: totals.filled_micro_pay === order.row.amount_micro_pay,
  };
}

/**
 * Writes some planned pairs, each at its planned amount and priced as fillFiatAmount says, then records the new totals.
 * Every mint from the mint-source account to the buyer (key `buy_order:<buy>:fill:<sell>`) is in the same
 * transaction as the fill rows and the status changes.
 */
async function writeFills(pass: MatcherPass, pairs: readonly PlannedFill[]): Promise<void> {
  const { deps, trx, is_sandbox, now, mint_account } = pass;
  const sell_totals = new Map<BookSell, Written>();
  const buy_totals = new Map<BookBuy, Written>();
  const priced = pairs.map((pair) => {
    const fill = { ...pair, fiat_amount: fillFiatAmount(pair.sell.row, pair.buy.row, pair.amount_micro_pay) };
    assert.ok(fill.fiat_amount > 0, `fill of buy ${pair.buy.row.id} by sell ${pair.sell.row.id} is worth a minor unit`);
    addFill(sell_totals, pair.sell, fill, pair.buy.row.id);
    addFill(buy_totals, pair.buy, fill, pair.sell.row.id);
    return fill;
  });

  // every fill's mint in one ledger call (all or none), LEDGER_BATCH_MAX at a time
  const mints: TransferResult[] = [];
  for (let start = 0; start < priced.length; start += LEDGER_BATCH_MAX) {
    const chunk = priced.slice(start, start + LEDGER_BATCH_MAX).map((fill) => ({
      key: fillMintKey(fill.buy.row.id, fill.sell.row.id),
      kind: 'mint' as const,
      debit_account: mint_account,
      credit_account: accounts.merchantAvailable(fill.buy.row.merchant_id, is_sandbox),
      amount_micro_pay: fill.amount_micro_pay,
      memo: `buy order ${fill.buy.row.id} filled by sell order ${fill.sell.row.id}`,
    }));
    mints.push(...(await deps.ledger.transferAll(chunk, { trx })));
  }
  // Each fill tells its buyer whom to pay (the seller's destination and name) and numbers on from the buy's earlier fills.
  const names = await merchantNames(
    trx,
    priced.flatMap((fill) => [fill.buy.row.merchant_id, fill.sell.row.merchant_id]),
  );
  const numbers = await fillCounts(trx, [
    ...new Set(priced.filter((fill) => fill.buy.written.filled_micro_pay > 0).map((fill) => fill.buy.row.id)),
  ]);
  const fills: NewFill[] = priced.map((fill, index) => {
    assert.notEqual(
      fill.sell.row.merchant_id,
      fill.buy.row.merchant_id,
      `buy order ${fill.buy.row.id} would fill its own merchant's sell order`,
    );
    const number = (numbers.get(fill.buy.row.id) ?? 0) + 1;
    numbers.set(fill.buy.row.id, number);
    const destination = fill.sell.row.payout_destination;
    return {
      id: randomUUID(),
      is_sandbox,
      sell_order_id: fill.sell.row.id,
      buy_order_id: fill.buy.row.id,
      amount_micro_pay: fill.amount_micro_pay,
      fiat_amount: fill.fiat_amount,
      mint_transfer_id: present(mints[index], `the ledger answered fill ${index}'s mint`).id,
      buy_fill_number: number,
      payee: destination ? { display_name: names.get(fill.sell.row.merchant_id) ?? '', destination } : null,
      payer_name: names.get(fill.buy.row.merchant_id) ?? null,
      created_at: now,
    };
  });
  await insertFills(trx, fills);
  const first_mint = new Map<string, string>();
  for (const fill of fills)
    if (!first_mint.has(fill.buy_order_id)) first_mint.set(fill.buy_order_id, fill.mint_transfer_id);
  await applySellFills(
    trx,
    [...sell_totals].map(([sell, totals]) => {
      const { first_id, ...update } = totalsOf(sell, totals);
      return { ...update, sell_order_id: sell.row.id, first_buy_order_id: first_id };
    }),
    mint_account,
    now,
  );
  const updated_buys = await applyBuyFills(
    trx,
    [...buy_totals].map(([buy, totals]) => {
      const { first_id, ...update } = totalsOf(buy, totals);
      const first_mint_transfer_id =
        buy.row.mint_transfer_id ??
        present(first_mint.get(buy.row.id), `touched buy order ${buy.row.id} has a fill with a mint`);
      return { ...update, buy_order_id: buy.row.id, first_sell_order_id: first_id, first_mint_transfer_id };
    }),
    now,
  );
  await emitBuyOrderEvents(
    trx,
    now,
    updated_buys.map((buy) => ({
      order: buy,
      type: buy.status === 'matched' ? 'buy_order.matched' : 'buy_order.partially_filled',
    })),
  );
  for (const [order, totals] of [...sell_totals, ...buy_totals]) order.written = totals;
}
