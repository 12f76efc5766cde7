import { randomUUID } from 'node:crypto';
import type { Db, Trx } from '../../db/database.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { UUID_PATTERN } from '../../http/schemas.ts';
import type { Clock } from '../../lib/clock.ts';
import { notFound } from '../../lib/errors.ts';
import { OWNERSHIP, owned } from '../../http/ownership.ts';
import { parseDecimal, type Currency } from '../../lib/money.ts';
import { normalizeRate } from '../liquidity/service.ts';
import type { QuoteLockPort } from '../payments/ports.ts';
import { recordAdminAction, type AdminActor } from '../audit/service.ts';
import type { QuoteLockStatus, QuoteLockView, ReferencePriceView } from './schema.ts';
import type { QuoteLockRow, ReferencePriceRow } from './tables.ts';
import {
  peggedPrice,
  priceNotPositive,
  pricesUnavailable,
  priceUnavailableForLock,
  quoteLockExpired,
  quoteLockMismatch,
  quoteLockUsed,
  quoteLockUsedBy,
} from './errors.ts';

/** PAY is the only base: every price is "quote-currency major units per 1 PAY", the unit seller rates use. */
export const FX_BASE = 'PAY';
/** PAY's reference value is 1 USD (docs/settlements.md); the pair is fixed and not an operator setting. */
export const PEGGED_QUOTE = 'USD';

export interface FxDeps {
  db: Db;
  clock: Clock;
  /** FX_QUOTE_LOCK_SECONDS */
  lock_seconds: number;
}

const UUID = new RegExp(UUID_PATTERN);

function presentPrice(row: ReferencePriceRow): ReferencePriceView {
  return {
    base: row.base,
    quote: row.quote,
    price: normalizeRate(row.price),
    updated_at: row.updated_at.toISOString(),
  };
}

/** A lock holds until `expires_at` (exclusive): at that instant it is expired. Used wins over expired. */
export function lockStatus(row: Pick<QuoteLockRow, 'used_at' | 'expires_at'>, now: Date): QuoteLockStatus {
  if (row.used_at !== null) return 'used';
  return now.getTime() >= row.expires_at.getTime() ? 'expired' : 'active';
}

function presentLock(row: QuoteLockRow, now: Date): QuoteLockView {
  return {
    id: row.id,
    base: row.base,
    quote: row.quote,
    currency: row.quote,
    rate: normalizeRate(row.rate),
    status: lockStatus(row, now),
    is_sandbox: row.is_sandbox,
    expires_at: row.expires_at.toISOString(),
    created_at: row.created_at.toISOString(),
    used_at: row.used_at?.toISOString() ?? null,
    payment_id: row.used_by_payment_id,
  };
}

/** Reference prices of PAY, optionally for some quote currencies; asking for one that has no price is 409 FX_PRICE_UNAVAILABLE. */
export async function listReferencePrices(db: Db, quotes?: readonly Currency[]): Promise<ReferencePriceView[]> {
  let select = db.selectFrom('fx_reference_prices').selectAll().where('base', '=', FX_BASE);
  if (quotes?.length) select = select.where('quote', 'in', quotes);
  const rows = await select.orderBy('quote').execute();
  const missing = (quotes ?? []).filter((quote) => !rows.some((row) => row.quote === quote));
  if (missing.length > 0) throw pricesUnavailable(missing.map((quote) => `${FX_BASE}/${quote}`));
  return rows.map(presentPrice);
}

/** Sets (or replaces) a reference price; the operator action is audited in the same transaction. */
export async function setReferencePrice(
  deps: Pick<FxDeps, 'db' | 'clock'>,
  actor: AdminActor,
  input: { base: string; quote: Currency; price: string },
): Promise<ReferencePriceView> {
  if (input.quote === PEGGED_QUOTE) {
    throw peggedPrice(`${FX_BASE}/${PEGGED_QUOTE}`);
  }
  if (parseDecimal(input.price).numerator <= 0n) throw priceNotPositive();
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const before = await trx
      .selectFrom('fx_reference_prices')
      .select('price')
      .where('base', '=', FX_BASE)
      .where('quote', '=', input.quote)
      .forUpdate()
      .executeTakeFirst();
    const row = await trx
      .insertInto('fx_reference_prices')
      .values({
        base: FX_BASE,
        quote: input.quote,
        price: input.price,
        updated_at: now,
        updated_by: actor.actor_user_id,
      })
      .onConflict((conflict) =>
        conflict
          .columns(['base', 'quote'])
          .doUpdateSet({ price: input.price, updated_at: now, updated_by: actor.actor_user_id }),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAdminAction(trx, {
      at: now,
      actor,
      action: 'fx.reference_price.set',
      target_type: 'fx_reference_price',
      target_id: `${FX_BASE}/${input.quote}`,
      details: { price_before: before ? normalizeRate(before.price) : null, price_after: normalizeRate(row.price) },
    });
    return presentPrice(row);
  });
}

/** Locks the current PAY/<currency> reference price for FX_QUOTE_LOCK_SECONDS, for this merchant and mode. */
export async function createQuoteLock(
  deps: FxDeps,
  trx: Trx,
  scope: MerchantScope,
  input: { currency: Currency },
): Promise<QuoteLockView> {
  const now = deps.clock.now();
  const price = await trx
    .selectFrom('fx_reference_prices')
    .selectAll()
    .where('base', '=', FX_BASE)
    .where('quote', '=', input.currency)
    .executeTakeFirst();
  if (!price) throw priceUnavailableForLock(`${FX_BASE}/${input.currency}`);
  const row = await trx
    .insertInto('fx_quote_locks')
    .values({
      id: randomUUID(),
      merchant_id: scope.merchant_id,
      is_sandbox: scope.is_sandbox,
      base: FX_BASE,
      quote: input.currency,
      rate: price.price,
      expires_at: new Date(now.getTime() + deps.lock_seconds * 1000),
      created_at: now,
      used_at: null,
      used_by_payment_id: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return presentLock(row, now);
}

export async function getQuoteLock(
  deps: Pick<FxDeps, 'db' | 'clock'>,
  scope: MerchantScope,
  id: string,
): Promise<QuoteLockView> {
  const row = await deps.db.selectFrom('fx_quote_locks').selectAll().where('id', '=', id).executeTakeFirst();
  return presentLock(owned(row, scope, OWNERSHIP.quote_lock), deps.clock.now());
}

/**
 * The payments module's QuoteLockPort: inside the trade's create transaction, locks the row and checks, in this
 * order, that it exists for this merchant and mode (else 404 NOT_FOUND, so a foreign id reveals nothing), is unused
 * (409 QUOTE_LOCK_USED), is unexpired (409 QUOTE_LOCK_EXPIRED) and is for the trade's currency (409
 * QUOTE_LOCK_MISMATCH); then marks it used by the payment. The row lock makes concurrent trades on one lock queue:
 * one uses it, the rest see it used. If the trade fails later its transaction rolls back and the lock stays unused.
 */
export function createQuoteLockPort(): QuoteLockPort {
  return {
    async consume(trx, scope, lock_id, expect, at) {
      if (!UUID.test(lock_id)) throw notFound(OWNERSHIP.quote_lock.noun);
      const row = owned(
        await trx.selectFrom('fx_quote_locks').selectAll().where('id', '=', lock_id).forUpdate().executeTakeFirst(),
        scope,
        OWNERSHIP.quote_lock,
      );
      const status = lockStatus(row, at);
      if (status === 'used') throw quoteLockUsedBy(lock_id, row.used_by_payment_id);
      if (status === 'expired') throw quoteLockExpired(lock_id, row.expires_at);
      if (row.quote !== expect.currency) {
        throw quoteLockMismatch(lock_id, row, expect.currency);
      }
      const used = await trx
        .updateTable('fx_quote_locks')
        .set({ used_at: at, used_by_payment_id: expect.payment_id })
        .where('id', '=', lock_id)
        .where('used_at', 'is', null)
        .returning('rate')
        .executeTakeFirst();
      if (!used) throw quoteLockUsed(lock_id);
      return { rate: used.rate };
    },
  };
}
