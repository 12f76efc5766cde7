import { randomUUID } from 'node:crypto';
import { generateSellerKey } from '../merchants/credentials.ts';
import type { Db, Executor, Trx } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { notFound } from '../../lib/errors.ts';
import { METHODS_BY_CURRENCY, parseDecimal, type Currency, type PaymentMethod } from '../../lib/money.ts';
import { recordAdminAction, type AdminActor } from '../audit/service.ts';
import { accounts, type Ledger } from '../ledger/port.ts';
import {
  bankRequired,
  methodUnsupportedForCurrency,
  payidRequired,
  promptpayIdRequired,
  rateNotPositive,
} from './errors.ts';
import type { SellerView } from './schema.ts';
import type { SellerPayee, SellerRow } from './tables.ts';

/** Sellers: creating and funding them, their payees, suspension when their PAY falls short, and their view. */

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

/**
 * Called inside the seller-creation transaction (the ledger module implements it: a live seller's liquidity is
 * backed by the PAY it is worth at its rate, minted into the seller's account). A throw keeps no seller.
 */
export interface SellerFundingPort {
  onSellerCreated(
    trx: Trx,
    seller: { id: string; is_sandbox: boolean; currency: Currency; rate: string; liquidity_minor: number },
  ): Promise<void>;
}

export async function createSeller(
  db: Db,
  clock: Clock,
  input: NewSeller,
  funding?: SellerFundingPort,
): Promise<SellerView & { seller_key: string }> {
  if (parseDecimal(input.rate).numerator <= 0n) {
    throw rateNotPositive();
  }
  if (!METHODS_BY_CURRENCY[input.currency].includes(input.payment_method)) {
    throw methodUnsupportedForCurrency(input.currency, input.payment_method);
  }
  const payee: SellerPayee = {};
  if (input.payment_method === 'promptpay') {
    if (!input.promptpay_id) throw promptpayIdRequired();
    payee.promptpay_id = input.promptpay_id;
  } else if (input.payment_method === 'payid') {
    if (!input.payid) throw payidRequired();
    payee.payid = input.payid;
  } else {
    if (!input.bank) throw bankRequired();
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
  // The seller's own credential (DESIGN 3b): shown once, here; only its SHA-256 is kept.
  const key = generateSellerKey();
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('sellers')
      .values({ ...row, key_hash: key.hash, key_hint: key.hint, key_created_at: row.created_at })
      .execute();
    await funding?.onSellerCreated(trx, {
      id: row.id,
      is_sandbox: row.is_sandbox,
      currency: input.currency,
      rate: input.rate,
      liquidity_minor: row.liquidity_minor,
    });
  });
  return {
    ...row,
    payee,
    rate: normalizeRate(input.rate),
    suspended_at: null,
    suspension_reason: null,
    created_at: row.created_at.toISOString(),
    seller_key: key.raw,
  };
}

/**
 * Rolls a live seller's key (`POST /admin/sellers/{id}/keys`): a new `sel_live_…` key, shown once; the old one stops
 * working at once. Audited.
 */
export async function rollSellerKey(
  db: Db,
  clock: Clock,
  actor: AdminActor,
  seller_id: string,
): Promise<{ seller_id: string; seller_key: string; key_hint: string; created_at: string }> {
  const now = clock.now();
  const key = generateSellerKey();
  return db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('sellers')
      .set({ key_hash: key.hash, key_hint: key.hint, key_created_at: now })
      .where('id', '=', seller_id)
      .where('synthetic', '=', false)
      .where('is_sandbox', '=', false)
      .returning('id')
      .executeTakeFirst();
    if (!updated) throw notFound('Seller');
    await recordAdminAction(trx, {
      at: now,
      actor,
      action: 'seller.key.roll',
      target_type: 'seller',
      target_id: seller_id,
      details: { key_hint: key.hint },
    });
    return { seller_id, seller_key: key.raw, key_hint: key.hint, created_at: now.toISOString() };
  });
}

export async function sellerPayees(
  executor: Executor,
  seller_ids: string[],
): Promise<Map<string, { display_name: string; payee: SellerPayee }>> {
  if (seller_ids.length === 0) return new Map();
  const rows = await executor
    .selectFrom('sellers')
    .select(['id', 'display_name', 'payee'])
    .where('id', 'in', seller_ids)
    .execute();
  return new Map(rows.map((row) => [row.id, { display_name: row.display_name, payee: row.payee }]));
}

/** The suspension reason of a seller whose PAY no longer covered a leg at completion. */
export const SELLER_UNFUNDED = 'ledger_insufficient_funds';

/**
 * Takes a live seller out of matching in the caller's transaction: no plan, reservation or rate reads it until an
 * operator funds it again (`fundSeller`). Returns false for an unknown or synthetic seller.
 */
export async function suspendSeller(trx: Trx, seller_id: string, reason: string, at: Date): Promise<boolean> {
  const result = await trx
    .updateTable('sellers')
    .set({ active: false, suspended_at: at, suspension_reason: reason })
    .where('id', '=', seller_id)
    .where('synthetic', '=', false)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The seller whose account a ledger refusal names (`<mode>:seller:<id>`), if it is one. */
export function sellerOfAccount(account: string | undefined): string | undefined {
  return /^(?:live|sandbox):seller:([0-9a-f-]{36})$/.exec(account ?? '')?.[1];
}

/**
 * `POST /admin/sellers/{id}/funding`: an operator mints PAY into a seller's account (world account, key
 * `seller:<id>:funding:<key>`) and puts a suspended seller back into matching, with its admin audit row, in one
 * transaction. The Idempotency-Key makes the ledger key, so a retry replays instead of funding twice.
 */
export async function fundSeller(
  deps: { db: Db; clock: Clock; ledger: Ledger },
  actor: AdminActor,
  seller_id: string,
  input: { amount_micro_pay: number },
  idempotency_key: string | undefined,
): Promise<SellerView & { balance_micro_pay: number }> {
  return deps.db.transaction().execute(async (trx) => {
    const seller = await trx
      .selectFrom('sellers')
      .selectAll()
      .where('id', '=', seller_id)
      .where('synthetic', '=', false)
      .forUpdate()
      .executeTakeFirst();
    if (!seller) throw notFound('Seller');
    const key = `seller:${seller.id}:funding:${idempotency_key ?? randomUUID()}`;
    const transfer = await deps.ledger.transfer(
      {
        key,
        kind: 'mint',
        debit_account: accounts.world(seller.is_sandbox),
        credit_account: accounts.seller(seller.id, seller.is_sandbox),
        amount_micro_pay: input.amount_micro_pay,
        memo: 'operator funding',
      },
      { trx },
    );
    const updated = await trx
      .updateTable('sellers')
      .set({ active: true, suspended_at: null, suspension_reason: null })
      .where('id', '=', seller.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (!transfer.replayed) {
      await recordAdminAction(trx, {
        at: deps.clock.now(),
        actor,
        action: 'seller.funding',
        target_type: 'seller',
        target_id: seller.id,
        details: {
          amount_micro_pay: input.amount_micro_pay,
          transfer_id: transfer.id,
          ledger_key: key,
          was_suspended: seller.suspended_at !== null,
          suspension_reason: seller.suspension_reason,
        },
      });
    }
    const balance_micro_pay = await deps.ledger.balance(accounts.seller(seller.id, seller.is_sandbox), { trx });
    return { ...presentSeller(updated), balance_micro_pay };
  });
}

export function presentSeller(row: SellerRow): SellerView {
  return {
    id: row.id,
    display_name: row.display_name,
    currency: row.currency,
    payment_method: row.payment_method,
    rate: normalizeRate(String(row.rate)),
    liquidity_minor: Number(row.liquidity_minor),
    reserved_minor: Number(row.reserved_minor),
    payee: row.payee,
    is_sandbox: row.is_sandbox,
    active: row.active,
    suspended_at: row.suspended_at?.toISOString() ?? null,
    suspension_reason: row.suspension_reason,
    created_at: row.created_at.toISOString(),
  };
}
