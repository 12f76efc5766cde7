import type { Trx } from '../../db/database.ts';
import { AppError } from '../../lib/errors.ts';
import { accounts, type Ledger, type TransferCommand } from '../ledger/port.ts';
import { refundInsufficientBalance } from './errors.ts';
import type { RefundRow } from './tables.ts';

/**
 * The PAY of a refund funded from the merchant's balance (DESIGN 3c "Refund from PAY"): held on create (available ->
 * refund hold), and given back (hold -> available) when the refund fails or is canceled before its payout, or when
 * the payout's sell order takes it (the sell order then reserves it from available in the same transaction).
 */
export const refundLedgerKeys = {
  hold: (id: string) => `refund:${id}:hold`,
  release: (id: string) => `refund:${id}:release`,
  /** A sandbox simulation's payout of the hold, burned as a completed sell order's reserve is. */
  payout: (id: string) => `refund:${id}:payout`,
};
export type HoldMove = keyof typeof refundLedgerKeys;

type Holder = Pick<RefundRow, 'id' | 'merchant_id' | 'is_sandbox'>;

function holdAccounts(
  refund: Holder,
  move: HoldMove,
): Pick<TransferCommand, 'kind' | 'debit_account' | 'credit_account'> {
  const available = accounts.merchantAvailable(refund.merchant_id, refund.is_sandbox);
  const hold = accounts.merchantRefundHold(refund.merchant_id, refund.is_sandbox);
  if (move === 'hold') return { kind: 'transfer', debit_account: available, credit_account: hold };
  if (move === 'release') return { kind: 'transfer', debit_account: hold, credit_account: available };
  return { kind: 'burn', debit_account: hold, credit_account: accounts.world(refund.is_sandbox) };
}

/** The PAY a refund holds: the payment's PAY before its fee times the refund's share of what was received, rounded up. */
export function holdMicroPay(credited_micro_pay: number, amount_minor: number, received_minor: number): number {
  const numerator = BigInt(credited_micro_pay) * BigInt(amount_minor);
  const denominator = BigInt(received_minor);
  return Number((numerator + denominator - 1n) / denominator);
}

/** One of a pay_balance refund's moves in the caller's transaction, keyed once per refund and move (none for merchant_transfer). */
export async function moveRefundHold(
  ledger: Ledger,
  trx: Trx,
  refund: Holder & { hold_micro_pay: number | null },
  move: HoldMove,
): Promise<void> {
  if (refund.hold_micro_pay === null) return;
  const command: TransferCommand = {
    key: refundLedgerKeys[move](refund.id),
    ...holdAccounts(refund, move),
    amount_micro_pay: Number(refund.hold_micro_pay),
    memo: `refund ${refund.id} ${move}`,
  };
  try {
    await ledger.transfer(command, { trx });
  } catch (error) {
    if (error instanceof AppError && error.code === 'LEDGER_INSUFFICIENT_FUNDS')
      throw refundInsufficientBalance(error.details);
    throw error;
  }
}
