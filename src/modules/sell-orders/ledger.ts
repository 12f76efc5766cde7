import { sql } from 'kysely';
import type { Executor, Trx } from '../../db/database.ts';
import { AppError } from '../../lib/errors.ts';
import { accounts, type Ledger, type TransferCommand } from '../ledger/port.ts';
import { unconfirmedFillsMicroPay } from '../buy-orders/ledger.ts';
import { availableBelowAmount, sellOrderLedgerUnavailable } from './errors.ts';
import type { SellOrderRow } from './tables.ts';

/** Keys of the ledger moves a sell order makes; the completion burn's key is the sell order id (contract 3.2). */
export const sellOrderLedgerKeys = {
  reserve: (id: string) => `sell_order:${id}:reserve`,
  release: (id: string) => `sell_order:${id}:release`,
  /** The unfilled rest of a partially filled order, returned when it closes (expiry or cancel). */
  releaseUnfilled: (id: string) => `sell_order:${id}:release-unfilled`,
  burn: (id: string) => id,
  /** A failed order's fills that the seller had confirmed paid: that part of its reserve is burned, not released. */
  burnPaid: (id: string) => `sell_order:${id}:burn-paid`,
};

/** One of the ledger moves a sell order makes, named as its key is. */
export type SellOrderMove = keyof typeof sellOrderLedgerKeys;

type PayHolder = Pick<SellOrderRow, 'id' | 'merchant_id' | 'is_sandbox' | 'mint_source_account'> & {
  refund_id?: string | null | undefined;
};

/**
 * The accounts of a move: into the seller's reserve (from its available account, or from the refund hold for an order
 * that pays a refund out), back to its available account, or burned from the reserve to the issuance account the
 * buyers' PAY was minted from (so a completed pair nets to zero there).
 */
function moveAccounts(
  order: PayHolder,
  move: SellOrderMove,
): Pick<TransferCommand, 'kind' | 'debit_account' | 'credit_account'> {
  const available = accounts.merchantAvailable(order.merchant_id, order.is_sandbox);
  const reserve = accounts.merchantReserve(order.merchant_id, order.is_sandbox);
  if (move === 'reserve') {
    const from = order.refund_id ? accounts.merchantRefundHold(order.merchant_id, order.is_sandbox) : available;
    return { kind: 'transfer', debit_account: from, credit_account: reserve };
  }
  if (move === 'release' || move === 'releaseUnfilled')
    return { kind: 'transfer', debit_account: reserve, credit_account: available };
  return {
    kind: 'burn',
    debit_account: reserve,
    credit_account: order.mint_source_account ?? accounts.world(order.is_sandbox),
  };
}

/** Ledger refusals in the words of the sell-order contract; anything else passes through unchanged. */
function mapLedgerError(error: unknown): never {
  if (error instanceof AppError) {
    if (error.code === 'LEDGER_UNAVAILABLE') throw sellOrderLedgerUnavailable(error.details);
    if (error.code === 'LEDGER_INSUFFICIENT_FUNDS')
      throw availableBelowAmount('SELL_ORDER_INSUFFICIENT_BALANCE', error.details);
  }
  throw error;
}

/** Runs ledger calls of a sell order in the caller's transaction, their refusals in the sell-order contract's words. */
export async function inSellOrderTerms<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    mapLedgerError(error);
  }
}

/** Makes one of a sell order's moves in the caller's transaction, keyed once per order and move. */
export async function moveSellOrderPay(
  ledger: Ledger,
  trx: Trx,
  order: PayHolder,
  move: SellOrderMove,
  amount_micro_pay: number,
  memo: string,
): Promise<void> {
  const command = { key: sellOrderLedgerKeys[move](order.id), ...moveAccounts(order, move), amount_micro_pay, memo };
  await inSellOrderTerms(() => ledger.transfer(command, { trx }));
}

/**
 * A new order's reserve: its PAY from available to reserve, refused (409 SELL_ORDER_INSUFFICIENT_BALANCE) when it is
 * more than the merchant may cash out, i.e. its available PAY less the PAY of its fills whose cash leg is not confirmed
 * yet (that PAY is unbacked until the buyer's transfer is confirmed). One reserve of a merchant and mode at a time (a
 * transaction-level lock), so many orders at once never reserve more than allowed.
 */
export async function reserveForSale(
  ledger: Ledger,
  trx: Trx,
  order: PayHolder & Pick<SellOrderRow, 'amount_micro_pay'>,
): Promise<void> {
  const { available, unconfirmed } = await cashOutAllowance(ledger, trx, order);
  if (available - unconfirmed < order.amount_micro_pay)
    throw availableBelowAmount('SELL_ORDER_INSUFFICIENT_BALANCE', [
      {
        field: 'body.amount_micro_pay',
        message: `is more than the ${Math.max(0, available - unconfirmed)} micro-PAY you may cash out (available ${available}, of which ${unconfirmed} from fills whose cash leg is not confirmed yet)`,
      },
    ]);
  await moveSellOrderPay(ledger, trx, order, 'reserve', order.amount_micro_pay, `sell order ${order.id} reserved`);
}

/**
 * What a merchant may cash out (DESIGN 3b): its available PAY less the PAY of its fills whose cash leg is not
 * confirmed yet, under the merchant and mode's cash-out lock (held to the end of the caller's transaction), so that
 * many cash-outs at once (sell orders, refunds from PAY) never take more than allowed.
 */
export async function cashOutAllowance(
  ledger: Ledger,
  trx: Trx,
  merchant: { merchant_id: string; is_sandbox: boolean },
): Promise<{ available: number; unconfirmed: number }> {
  const mode = merchant.is_sandbox ? 'sandbox' : 'live';
  await sql`select pg_advisory_xact_lock(hashtextextended(${`mpay:cash-out:${merchant.merchant_id}:${mode}`}, 0))`.execute(
    trx,
  );
  const available_account = accounts.merchantAvailable(merchant.merchant_id, merchant.is_sandbox);
  const available = await inSellOrderTerms(() => ledger.balance(available_account, { trx }));
  const unconfirmed = await unconfirmedFillsMicroPay(trx, merchant.merchant_id, merchant.is_sandbox);
  return { available, unconfirmed };
}

/**
 * PAY of the order still in its reserve: all of it while nothing is filled; once it is matched, the filled part (the
 * unfilled rest of a partially filled order went back when it closed).
 */
export function reservedMicroPay(order: Pick<SellOrderRow, 'amount_micro_pay' | 'filled_micro_pay'>): number {
  return order.filled_micro_pay > 0 ? order.filled_micro_pay : order.amount_micro_pay;
}

/** Reserve back to available: every failure path releases, keyed once per order. */
export async function releaseReserve(ledger: Ledger, trx: Trx, order: SellOrderRow): Promise<void> {
  await moveSellOrderPay(ledger, trx, order, 'release', reservedMicroPay(order), `sell order ${order.id} released`);
}

/**
 * For the balance view: PAY credited back to the merchant's available account since `since` by sell-order reserve
 * releases (cancel, expiry, exhausted cash legs, the unfilled rest of a partly filled order). Those credits return the
 * merchant's own PAY, so they are no volume: the trailing 30-day volume leaves them out.
 */
export async function releasedReserveMicroPaySince(
  executor: Executor,
  merchant_id: string,
  is_sandbox: boolean,
  since: Date,
): Promise<number> {
  const result = await sql<{ released: string }>`
    select (
      coalesce(sum(case when filled_micro_pay > 0 then filled_micro_pay else amount_micro_pay end) filter (where status = 'failed' and failed_at >= ${since}), 0)
      + coalesce(sum(amount_micro_pay - filled_micro_pay) filter (where status <> 'pending' and filled_micro_pay > 0 and filled_micro_pay < amount_micro_pay and matched_at >= ${since}), 0)
    )::text as released
    from sell_orders where merchant_id = ${merchant_id} and is_sandbox = ${is_sandbox}`.execute(executor);
  return Number(result.rows[0]?.released ?? 0);
}
