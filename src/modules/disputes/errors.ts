import { AppError } from '../../lib/errors.ts';

/** Every refusal of the disputes module, one named factory each (status-transition 409s: the transition helper). */

export const unresolvedDisputeExists = () =>
  new AppError('DISPUTE_BAD_STATE', 'This sell order already has an unresolved dispute', [
    { field: 'body.sell_order_id', message: 'has an unresolved dispute' },
  ]);
export const disputeNotResolvable = (status: string) =>
  new AppError('DISPUTE_BAD_STATE', `A dispute that is ${status} cannot be resolved (investigate it first)`);
export const buyerDisputeBadState = (status: string) =>
  new AppError(
    'DISPUTE_BAD_STATE',
    `A buyer disputes a sell order while its cash leg is in flight or after it failed; this one is ${status}`,
    [{ field: 'body.sell_order_id', message: `sell order is ${status}` }],
  );
export const refundPayoutConfirmed = () =>
  new AppError(
    'DISPUTE_BAD_STATE',
    'This sell order paid a refund that its buyer confirmed receiving: the refund has succeeded and its payout cannot be disputed by the refunding merchant',
  );
