import { sql } from 'kysely';
import type { Db, Executor, Trx } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { assert, present } from '../../lib/assert.ts';
import { AppError } from '../../lib/errors.ts';
import {
  fiatMinorToMicroPay,
  parseDecimal,
  minorToDecimal,
  type Currency,
  type PaymentMethod,
} from '../../lib/money.ts';
import {
  insufficientLiquidity,
  legWorthNothing,
  noSandboxSeller,
  offersTakenConcurrently,
  offersUnreadable,
} from './errors.ts';
import { normalizeRate } from './sellers.ts';

export {
  createSeller,
  fundSeller,
  type NewSeller,
  normalizeRate,
  presentSeller,
  rollSellerKey,
  SELLER_UNFUNDED,
  type SellerFundingPort,
  sellerOfAccount,
  sellerPayees,
  suspendSeller,
} from './sellers.ts';

/** What a sandbox offer reports as available: synthetic sellers are not bounded. */
export const SANDBOX_LIQUIDITY_MINOR = 100_000_000_000;

export interface Leg {
  seller_id: string;
  match_order: number;
  allocated_fiat_amount: number;
  rate: string;
  amount_micro_pay: number;
  /** Liquidity the leg holds when that differs from allocated_fiat_amount (legs written before quote locks filtered offers). */
  reserved_minor: number | null;
}

export interface OfferKey {
  is_sandbox: boolean;
  currency: Currency;
  payment_method: PaymentMethod;
}

/** An offer changed between the plan and the reservation (mpay_reserve_offers): re-plan and retry. */
export class AllocationRaced extends Error {
  constructor() {
    super('an offer changed between planning and reserving');
  }
}

/**
 * How many times a create plans optimistically; the attempt after these plans with the offers locked (the old
 * pessimistic way, in the same FIFO lock order), so a create under heavy contention still finishes.
 */
export const OPTIMISTIC_ALLOCATION_ATTEMPTS = 3;

/** a <= b for two decimal rate strings, exactly. */
export function rateAtOrBelow(a: string, b: string): boolean {
  const left = parseDecimal(a);
  const right = parseDecimal(b);
  return left.numerator * 10n ** BigInt(right.scale) <= right.numerator * 10n ** BigInt(left.scale);
}

/** A live offer as planning sees it; `available_minor` goes down as legs are planned on it. */
export interface OfferState {
  id: string;
  rate: string;
  available_minor: number;
}

/** An offer as a page holds it: `created_at` as text (a Date would lose its microseconds), the keyset's last column but one. */
export interface OfferPageRow extends OfferState {
  created_at: string;
}

/** How many offers one read takes: planning reads the next ones only when those read so far fall short. */
export const OFFER_PAGE = 32;

/**
 * The live offers of one currency and rail in FIFO order (best rate, then the oldest), read a page at a time as
 * planning needs them, plain or locked (FOR NO KEY UPDATE, page after page in that order, so two lockers never
 * deadlock). A batch plans many payments over one book; a payment that the offers read so far cannot cover reads the
 * next page (keyset on rate, created_at, id) and plans again. A currency with thousands of offers thus costs a read of
 * the first few, not of all of them, per batch.
 */
export class OfferBook {
  readonly #executor: Executor;
  readonly #offer: OfferKey;
  readonly #lock: boolean;
  readonly #offers: OfferState[] = [];
  /** Where the next page starts: the last offer read (created_at as text: a Date would lose its microseconds). */
  #after: { rate: string; created_at: string; id: string } | undefined;
  #exhausted = false;

  /**
   * `first_page`: the book's first page as a statement that just wrote it answered (the batched create's call), read
   * as if by this book; planning reads on from its last offer when it falls short.
   */
  constructor(executor: Executor, offer: OfferKey, lock: boolean, first_page?: readonly OfferPageRow[]) {
    this.#executor = executor;
    this.#offer = offer;
    this.#lock = lock;
    if (first_page) this.#take(first_page);
  }

  /** Plans `amount_minor` over the book (planLegs), reading more offers while those read fall short. */
  async plan(amount_minor: number, rate_override?: string): Promise<Leg[]> {
    if (this.#offers.length === 0 && !this.#exhausted) await this.#read();
    for (;;) {
      try {
        return planLegs(this.#offers, this.#offer, amount_minor, rate_override);
      } catch (error) {
        // planLegs leaves the offers as they were when they fall short
        if (this.#exhausted || !(error instanceof AppError && error.code === 'PAYMENT_INSUFFICIENT_LIQUIDITY'))
          throw error;
        await this.#read();
      }
    }
  }

  async #read(): Promise<void> {
    const after = this.#after;
    const query = this.#executor
      .selectFrom('sellers')
      .select(['id', 'rate', 'liquidity_minor', 'reserved_minor', sql<string>`created_at::text`.as('created_at_text')])
      .where('is_sandbox', '=', false)
      .where('currency', '=', this.#offer.currency)
      .where('payment_method', '=', this.#offer.payment_method)
      .where('active', '=', true)
      .where(sql<boolean>`liquidity_minor > reserved_minor`)
      .$if(after !== undefined, (next) =>
        next.where(
          sql<boolean>`(rate, created_at, id) > (${after!.rate}::numeric, ${after!.created_at}::timestamptz, ${after!.id}::uuid)`,
        ),
      )
      .orderBy('rate', 'asc')
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .limit(OFFER_PAGE);
    const rows = await (this.#lock ? query.forNoKeyUpdate() : query).execute();
    this.#take(
      rows.map((row) => ({
        id: row.id,
        rate: String(row.rate),
        available_minor: Number(row.liquidity_minor) - Number(row.reserved_minor),
        created_at: row.created_at_text,
      })),
    );
  }

  #take(rows: readonly OfferPageRow[]): void {
    for (const row of rows) this.#offers.push({ id: row.id, rate: row.rate, available_minor: row.available_minor });
    const last = rows.at(-1);
    if (last) this.#after = { rate: last.rate, created_at: last.created_at, id: last.id };
    if (rows.length < OFFER_PAGE) this.#exhausted = true;
  }
}

/**
 * Plans `amount_minor` FIFO over `offers` (in FIFO order) and takes the planned amounts off their `available_minor`,
 * so several payments planned one after another over the same offers (a batch) never overbook them.
 * Not enough: PAYMENT_INSUFFICIENT_LIQUIDITY, and `offers` are left as they were.
 */
export function planLegs(
  offers: OfferState[],
  offer: Pick<OfferKey, 'currency' | 'payment_method'>,
  amount_minor: number,
  rate_override?: string,
): Leg[] {
  const legs: Leg[] = [];
  const takes: [OfferState, number][] = [];
  let remaining = amount_minor;
  for (const seller of offers) {
    if (remaining === 0) break;
    if (rate_override !== undefined && !rateAtOrBelow(seller.rate, rate_override)) continue;
    const take = Math.min(remaining, seller.available_minor);
    if (take <= 0) continue;
    const rate = rate_override ?? seller.rate;
    const amount_micro_pay = fiatMinorToMicroPay(take, offer.currency, rate);
    // A take too small to buy 1 micro-PAY at this rate would be fiat paid for nothing: this offer cannot cover it.
    if (amount_micro_pay <= 0) continue;
    legs.push({
      seller_id: seller.id,
      match_order: legs.length + 1,
      allocated_fiat_amount: take,
      rate,
      amount_micro_pay,
      reserved_minor: null,
    });
    takes.push([seller, take]);
    remaining -= take;
  }
  if (remaining > 0) {
    throw insufficientLiquidity(offer, amount_minor - remaining, amount_minor);
  }
  for (const [seller, held] of takes) seller.available_minor -= held;
  return checkedLegs(legs, amount_minor);
}

/**
 * The legs invariant, asserted on every plan before a leg row is written: numbered 1..n in order, each a positive
 * fiat amount worth at least 1 micro-PAY (the completion posts every leg; a 0-PAY leg would be fiat paid for
 * nothing), together exactly the payment's amount. `payment_legs` checks allocated_fiat_amount > 0 and
 * amount_micro_pay > 0 (migration 0145) as the second half.
 */
export function checkedLegs<L extends Pick<Leg, 'match_order' | 'allocated_fiat_amount' | 'amount_micro_pay'>>(
  legs: L[],
  amount_minor: number,
): L[] {
  let total_minor = 0;
  legs.forEach((leg, index) => {
    assert(leg.match_order === index + 1, `leg ${index + 1} is numbered ${leg.match_order}`);
    assert(
      Number.isSafeInteger(leg.allocated_fiat_amount) && leg.allocated_fiat_amount > 0,
      `leg ${leg.match_order} allocates ${leg.allocated_fiat_amount} minor units`,
    );
    assert(
      Number.isSafeInteger(leg.amount_micro_pay) && leg.amount_micro_pay > 0,
      `leg ${leg.match_order} is worth ${leg.amount_micro_pay} micro-PAY`,
    );
    total_minor += leg.allocated_fiat_amount;
  });
  assert(total_minor === amount_minor, `legs add up to ${total_minor} minor units, not the payment's ${amount_minor}`);
  return legs;
}

const heldOf = (leg: Pick<Leg, 'allocated_fiat_amount'> & { reserved_minor?: number | null }): number =>
  leg.reserved_minor ?? leg.allocated_fiat_amount;

/** A create that kept losing races for the same offers reports them as taken. */
export function raceLost(error: unknown): unknown {
  return error instanceof AllocationRaced ? offersTakenConcurrently() : error;
}

/**
 * Sandbox allocation over the synthetic sellers, one leg per part (`parts` sum to the amount); parts beyond the
 * number of synthetic sellers reuse the last one. Synthetic liquidity is unbounded: nothing is reserved or locked.
 */
export async function allocateSynthetic(
  trx: Executor,
  offer: OfferKey,
  parts: number[],
  options: { rate_override?: string | undefined } = {},
): Promise<Leg[]> {
  const all = await trx
    .selectFrom('sellers')
    .select(['id', 'rate'])
    .where('synthetic', '=', true)
    .where('currency', '=', offer.currency)
    .where('payment_method', '=', offer.payment_method)
    .orderBy('rate', 'asc')
    .orderBy('id', 'asc')
    .execute();
  if (all.length === 0) throw noSandboxSeller(offer);
  // As live: under a quote lock only sellers whose own rate is at or below the lock's take part.
  const lock_rate = options.rate_override;
  const sellers = lock_rate === undefined ? all : all.filter((seller) => rateAtOrBelow(String(seller.rate), lock_rate));
  const total = parts.reduce((sum, part) => sum + part, 0);
  if (sellers.length === 0) throw insufficientLiquidity(offer, 0, total);
  const legs = parts.map((part, index) => {
    const seller = present(sellers[Math.min(index, sellers.length - 1)], 'there is at least one synthetic seller');
    const rate = options.rate_override ?? seller.rate;
    return {
      seller_id: seller.id,
      match_order: index + 1,
      allocated_fiat_amount: part,
      rate,
      amount_micro_pay: fiatMinorToMicroPay(part, offer.currency, rate),
      reserved_minor: null,
    };
  });
  // A quote lock's rate may make a small part worth nothing: no leg is worth 0 PAY, so the sandbox has no offer for it.
  const worthless = legs.find((leg) => leg.amount_micro_pay <= 0);
  if (worthless) throw legWorthNothing(worthless.allocated_fiat_amount, offer.currency, worthless.rate);
  return checkedLegs(legs, total);
}

/** A leg as release and consume need it: what it holds of the seller's liquidity. */
export type HeldLeg = Pick<Leg, 'seller_id' | 'allocated_fiat_amount'> & { reserved_minor?: number | null };

/**
 * Locks live sellers in the one order every path that changes them uses, the reservation's (rate, created_at, id):
 * a transaction that releases or consumes several sellers (the expiry sweeper's batch, a multi-leg completion) then
 * never holds one while waiting for another that a reservation holds the other way round.
 */
export async function lockSellersInOrder(trx: Trx, seller_ids: readonly string[]): Promise<void> {
  const ids = [...new Set(seller_ids)];
  if (ids.length < 2) return;
  await trx
    .selectFrom('sellers')
    .select('id')
    .where('id', 'in', ids)
    .where('synthetic', '=', false)
    .orderBy('rate')
    .orderBy('created_at')
    .orderBy('id')
    .forNoKeyUpdate()
    .execute();
}

/** Gives reserved liquidity back (failed, expired or cancelled payment). */
export function releaseLegs(trx: Trx, legs: readonly HeldLeg[]): Promise<void> {
  return unreserveLegs(trx, legs, { used: false });
}

/** The buyer paid the sellers: their reserved liquidity is used up (at the seller's rate, what the seller's PAY paid for). */
export function consumeLegs(trx: Trx, legs: readonly HeldLeg[]): Promise<void> {
  return unreserveLegs(trx, legs, { used: true });
}

/** Takes each leg's hold off its seller's reserve, and off its liquidity too when the buyer's money `used` it. */
async function unreserveLegs(trx: Trx, legs: readonly HeldLeg[], { used }: { used: boolean }): Promise<void> {
  await lockSellersInOrder(
    trx,
    legs.map((leg) => leg.seller_id),
  );
  for (const leg of legs) {
    const held = heldOf(leg);
    await trx
      .updateTable('sellers')
      .set((eb) => ({
        reserved_minor: eb('reserved_minor', '-', held),
        ...(used ? { liquidity_minor: eb('liquidity_minor', '-', held) } : {}),
      }))
      .where('id', '=', leg.seller_id)
      .where('synthetic', '=', false)
      .execute();
  }
}

export interface RateSnapshot {
  currency: Currency;
  payment_method: PaymentMethod;
  best_rate: string | null;
  available_liquidity_minor: number;
  available_liquidity_decimal: string;
  offers: number;
  as_of: string;
}

/** Best rate and available liquidity, from the same offers `allocate` uses. */
export async function rateSnapshot(db: Db, clock: Clock, offer: OfferKey): Promise<RateSnapshot> {
  try {
    const row = await db
      .selectFrom('sellers')
      .select((eb) => [
        eb.fn.min('rate').as('best_rate'),
        eb.fn.coalesce(eb.fn.sum<string>(sql`liquidity_minor - reserved_minor`), sql<string>`0`).as('available'),
        eb.fn.countAll<string>().as('offers'),
      ])
      .where('is_sandbox', '=', offer.is_sandbox)
      .where('currency', '=', offer.currency)
      .where('payment_method', '=', offer.payment_method)
      .where('active', '=', true)
      .where((eb) => (offer.is_sandbox ? eb.val(true) : eb(sql`liquidity_minor - reserved_minor`, '>', 0)))
      .executeTakeFirstOrThrow();
    const available = offer.is_sandbox ? (Number(row.offers) > 0 ? SANDBOX_LIQUIDITY_MINOR : 0) : Number(row.available);
    return {
      currency: offer.currency,
      payment_method: offer.payment_method,
      best_rate: row.best_rate === null ? null : normalizeRate(String(row.best_rate)),
      available_liquidity_minor: available,
      available_liquidity_decimal: minorToDecimal(available, offer.currency),
      offers: Number(row.offers),
      as_of: clock.now().toISOString(),
    };
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw offersUnreadable();
  }
}
