import { AppError } from '../../lib/errors.ts';

/** Every refusal of the settlements module, one named factory each (status-transition 409s: state.ts). */

export const onlyCompletedCanFail = (status: string) =>
  new AppError('SETTLEMENT_BAD_STATE', `Only a completed settlement can be marked failed; this one is ${status}`);
export const onlyFailedCanRetry = (status: string) =>
  new AppError('SETTLEMENT_BAD_STATE', `Only a failed settlement can be retried; this one is ${status}`);
export const zeroAdjustment = () =>
  new AppError('VALIDATION_ERROR', 'amount_minor must not be zero', [
    { field: 'body.amount_minor', message: 'must not be zero' },
  ]);
export const pendingNotAdjustable = () =>
  new AppError('SETTLEMENT_BAD_STATE', 'A pending settlement cannot be adjusted');
export const adjustmentBelowZero = (net_minor: number, amount_minor: number) =>
  new AppError(
    'SETTLEMENT_BAD_STATE',
    `The adjustment would make the net negative (${net_minor} + ${amount_minor} minor units)`,
  );
