import { AppError } from '../../lib/errors.ts';

/** Refusals of the pending-funds module, one named factory each (status-transition 409s: state.ts; receipt checks: receipt.ts). */

export const passedDeadline = (id: string) =>
  new AppError('PENDING_FUNDS_TERMINAL', `Pending funds ${id} passed its deadline`);
export const pendingFundsLedgerUnavailable = () =>
  new AppError(
    'PENDING_FUNDS_LEDGER_UNAVAILABLE',
    'The ledger is unavailable; nothing was recorded and the attempt was not used. Retry.',
  );
