import { AppError, type ErrorCode, type ErrorDetail } from '../../lib/errors.ts';

/** Every refusal of the sell-orders module, one named factory each (status-transition 409s: state.ts). */

export const sellOrderLedgerUnavailable = (details: ErrorDetail[]) =>
  new AppError(
    'SELL_ORDER_LEDGER_UNAVAILABLE',
    'The PAY ledger is unavailable; nothing was changed, retry the request',
    details,
  );
export const availableBelowAmount = (code: ErrorCode, details: ErrorDetail[]) =>
  new AppError(code, 'Available PAY is lower than the sell order amount', details);
export const sellOrderNotCancellable = (status: string) =>
  new AppError('SELL_ORDER_BAD_STATE', `Only a pending sell order can be cancelled; this one is ${status}`);
export const cashLegNotInFlight = (status: string) =>
  new AppError(
    'SELL_ORDER_BAD_STATE',
    `Cash legs are confirmed while the sell order is cash_leg_in_flight; this one is ${status}`,
  );
export const changedWhileEvidenceChecked = () =>
  new AppError('SELL_ORDER_BAD_STATE', 'The sell order changed status while the evidence was checked; retry');
export const batchChangedConcurrently = () =>
  new AppError('SELL_ORDER_BAD_STATE', 'A sell order of the batch changed status concurrently');
export const refundPayoutUnderway = (status: string) =>
  new AppError(
    'SELL_ORDER_BAD_STATE',
    `This sell order pays a refund out and buyers have filled part of it; it stays ${status} until it is paid in full`,
  );
export const refundPayoutAwaitsPayee = (outcome: string) =>
  new AppError(
    'SELL_ORDER_BAD_STATE',
    `This sell order pays a refund out: only a slip a provider verified confirms its cash leg (this one: ${outcome}); otherwise the refund's buyer confirms receipt on the claim page`,
  );
