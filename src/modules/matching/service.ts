import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, Executor, Trx } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { fiatMinorToMicroPay, METHODS_BY_CURRENCY, parseDecimal, minorToDecimal, type Currency, type PaymentMethod } from '../../lib/money.ts';
import type { SellerPayee } from '../payments/tables.ts';

/** What a sandbox offer reports as available: synthetic sellers are not bounded. */
export const SANDBOX_LIQUIDITY_MINOR = 100_000_000_000;

export interface Leg {
  seller_id: string;
  match_order: number;
  allocated_fiat_amount: number;
  rate: string;
  amount_micro_pay: number;
}

export interface OfferKey {
  is_sandbox: boolean;
  currency: Currency;
  payment_method: PaymentMethod;
}

/**
 * Allocates `amount_minor` across seller offers FIFO (best rate first, i.e. the fewest fiat units per PAY, then the
 * oldest offer) and reserves it, inside the caller's transaction. Offers are locked in that same order, so two
 * allocations never deadlock and never reserve the same liquidity twice. Not enough: PAYMENT_INSUFFICIENT_LIQUIDITY
 * (the caller's transaction rolls back, so nothing is kept).
 */
export async function allocate(trx: Trx, offer: OfferKey, amount_minor: number, options: { rate_override?: string } = {}): Promise<Leg[]> {
  if (offer.is_sandbox) return allocateSynthetic(trx, offer, [amount_minor], options);
  const offers = await trx
    .selectFrom('sellers')
    .select(['id', 'rate', 'liquidity_minor', 'reserved_minor'])
    .where('is_sandbox', '=', false)
    .where('currency', '=', offer.currency)
    .where('payment_method', '=', offer.payment_method)
    .where('active', '=', true)
    .where(sql<boolean>`liquidity_minor > reserved_minor`)
    .orderBy('rate', 'asc')
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .forUpdate()
    .execute();

  const legs: Leg[] = [];
  let remaining = amount_minor;
  for (const seller of offers) {
    if (remaining === 0) break;
    const take = Math.min(remaining, seller.liquidity_minor - seller.reserved_minor);
    const rate = options.rate_override ?? seller.rate;
    legs.push({ seller_id: seller.id, match_order: legs.length + 1, allocated_fiat_amount: take, rate, amount_micro_pay: fiatMinorToMicroPay(take, offer.currency, rate) });
    remaining -= take;
  }
  if (remaining > 0) {
    throw new AppError(
      'PAYMENT_INSUFFICIENT_LIQUIDITY',
      `Not enough ${offer.currency} ${offer.payment_method} liquidity: ${minorToDecimal(amount_minor - remaining, offer.currency)} of ${minorToDecimal(amount_minor, offer.currency)} available`,
    );
  }
  for (const leg of legs) {
    await trx.updateTable('sellers').set((eb) => ({ reserved_minor: eb('reserved_minor', '+', leg.allocated_fiat_amount) })).where('id', '=', leg.seller_id).execute();
  }
  return legs;
}

/**
 * Sandbox allocation over the synthetic sellers, one leg per part (`parts` sum to the amount); parts beyond the
 * number of synthetic sellers reuse the last one. Synthetic liquidity is unbounded: nothing is reserved or locked.
 */
export async function allocateSynthetic(trx: Executor, offer: OfferKey, parts: number[], options: { rate_override?: string } = {}): Promise<Leg[]> {
  const sellers = await trx
    .selectFrom('sellers')
    .select(['id', 'rate'])
    .where('synthetic', '=', true)
    .where('currency', '=', offer.currency)
    .where('payment_method', '=', offer.payment_method)
    .orderBy('rate', 'asc')
    .orderBy('id', 'asc')
    .execute();
  if (sellers.length === 0) throw new AppError('MATCHING_UNAVAILABLE', `No sandbox seller for ${offer.currency} ${offer.payment_method}`);
  return parts.map((part, index) => {
    const seller = sellers[Math.min(index, sellers.length - 1)]!;
    const rate = options.rate_override ?? seller.rate;
    return { seller_id: seller.id, match_order: index + 1, allocated_fiat_amount: part, rate, amount_micro_pay: fiatMinorToMicroPay(part, offer.currency, rate) };
  });
}

/** Gives reserved liquidity back (failed, expired or cancelled payment). */
export async function releaseLegs(trx: Trx, legs: readonly Pick<Leg, 'seller_id' | 'allocated_fiat_amount'>[]): Promise<void> {
  for (const leg of legs) {
    await trx
      .updateTable('sellers')
      .set((eb) => ({ reserved_minor: eb('reserved_minor', '-', leg.allocated_fiat_amount) }))
      .where('id', '=', leg.seller_id)
      .where('synthetic', '=', false)
      .execute();
  }
}

/** The buyer paid the sellers: their reserved liquidity is used up. */
export async function consumeLegs(trx: Trx, legs: readonly Pick<Leg, 'seller_id' | 'allocated_fiat_amount'>[]): Promise<void> {
  for (const leg of legs) {
    await trx
      .updateTable('sellers')
      .set((eb) => ({
        reserved_minor: eb('reserved_minor', '-', leg.allocated_fiat_amount),
        liquidity_minor: eb('liquidity_minor', '-', leg.allocated_fiat_amount),
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
    throw new AppError('MATCHING_UNAVAILABLE', 'The matching service could not read offers');
  }
}

/** numeric(20,8) comes back as "35.00000000": trim to at least two decimals. */
export function normalizeRate(rate: string): string {
  if (!rate.includes('.')) return `${rate}.00`;
  const [whole, fraction = ''] = rate.split('.');
  return `${whole}.${fraction.replace(/0+$/, '').padEnd(2, '0')}`;
}

export interface NewSeller {
  currency: Currency;
  payment_method: PaymentMethod;
  display_name: string;
  liquidity_minor: number;
  rate: string;
  promptpay_id?: string | undefined;
  payid?: string | undefined;
  bank?: { code: string; account_number: string; account_name: string } | undefined;
}

export interface SellerView {
  id: string;
  display_name: string;
  currency: string;
  payment_method: string;
  rate: string;
  liquidity_minor: number;
  reserved_minor: number;
  payee: SellerPayee;
  is_sandbox: boolean;
  created_at: string;
}

/**
 * Called inside the seller-creation transaction (the ledger module implements it: a live seller's liquidity is
 * backed by the PAY it is worth at its rate, minted into the seller's account). A throw keeps no seller.
 */
export interface SellerFundingPort {
  onSellerCreated(trx: Trx, seller: { id: string; is_sandbox: boolean; currency: Currency; rate: string; liquidity_minor: number }): Promise<void>;
}

export async function createSeller(db: Db, clock: Clock, input: NewSeller, funding?: SellerFundingPort): Promise<SellerView> {
  if (parseDecimal(input.rate).numerator <= 0n) {
    throw new AppError('VALIDATION_ERROR', 'rate must be greater than zero', [{ field: 'body.rate', message: 'must be > 0' }]);
  }
  if (!METHODS_BY_CURRENCY[input.currency].includes(input.payment_method)) {
    throw new AppError('VALIDATION_ERROR', `${input.currency} does not support ${input.payment_method}`, [{ field: 'body.payment_method', message: 'unsupported for currency' }]);
  }
  const payee: SellerPayee = {};
  if (input.payment_method === 'promptpay') {
    if (!input.promptpay_id) throw new AppError('VALIDATION_ERROR', 'promptpay sellers need promptpay_id', [{ field: 'body.promptpay_id', message: 'required' }]);
    payee.promptpay_id = input.promptpay_id;
  } else if (input.payment_method === 'payid') {
    if (!input.payid) throw new AppError('VALIDATION_ERROR', 'payid sellers need payid', [{ field: 'body.payid', message: 'required' }]);
    payee.payid = input.payid;
  } else {
    if (!input.bank) throw new AppError('VALIDATION_ERROR', 'bank_transfer sellers need bank', [{ field: 'body.bank', message: 'required' }]);
    payee.bank = input.bank;
  }
  const row = {
    id: randomUUID(),
    is_sandbox: false,
    synthetic: false,
    display_name: input.display_name,
    currency: input.currency,
    payment_method: input.payment_method,
    rate: input.rate,
    liquidity_minor: input.liquidity_minor,
    reserved_minor: 0,
    payee: JSON.stringify(payee),
    active: true,
    created_at: clock.now(),
  };
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('sellers').values(row).execute();
    await funding?.onSellerCreated(trx, { id: row.id, is_sandbox: row.is_sandbox, currency: input.currency, rate: input.rate, liquidity_minor: row.liquidity_minor });
  });
  return { ...row, payee, rate: normalizeRate(input.rate), created_at: row.created_at.toISOString() };
}

export async function sellerPayees(executor: Executor, seller_ids: string[]): Promise<Map<string, { display_name: string; payee: SellerPayee }>> {
  if (seller_ids.length === 0) return new Map();
  const rows = await executor.selectFrom('sellers').select(['id', 'display_name', 'payee']).where('id', 'in', seller_ids).execute();
  return new Map(rows.map((row) => [row.id, { display_name: row.display_name, payee: row.payee }]));
}
