import { AppError, type ErrorDetail } from '../../lib/errors.ts';

/** Every refusal of the disputes module, one named factory each (status-transition 409s: the transition helper). */

export const unresolvedDisputeExists = () =>
  new AppError('DISPUTE_BAD_STATE', 'This sell order already has an unresolved dispute', [
    { field: 'body.sell_order_id', message: 'has an unresolved dispute' },
  ]);
export const disputeNotResolvable = (status: string) =>
  new AppError('DISPUTE_BAD_STATE', `A dispute that is ${status} cannot be resolved (investigate it first)`);
export const resolutionBurnUncovered = (traded_micro_pay: number, status: string, details: ErrorDetail[]) =>
  new AppError(
    'LEDGER_INSUFFICIENT_FUNDS',
    `The merchant's available PAY is below the ${traded_micro_pay} micro-PAY this resolution burns; the dispute stays ${status}`,
    details,
  );
