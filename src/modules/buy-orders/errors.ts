import { AppError } from '../../lib/errors.ts';

/** Every refusal of the buy-orders module, one named factory each (status-transition 409s: the transition helper). */

export const buyOrderNotCancellable = (status: string) =>
  new AppError('BUY_ORDER_BAD_STATE', `Only a pending buy order can be cancelled; this one is ${status}`);
export const buyBatchChangedConcurrently = () =>
  new AppError('BUY_ORDER_BAD_STATE', 'A buy order of the batch changed status concurrently');
export const noQrForRail = (rail: string) =>
  new AppError('NOT_FOUND', `This fill's seller is paid by ${rail}, which has no QR; pay the destination in pay_to`);
