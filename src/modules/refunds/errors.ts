import { AppError, type ErrorDetail } from '../../lib/errors.ts';

/** Every refusal of the refunds module, one named factory each (status-transition 409s: the transition helper). */

export const paymentNotRefundable = (status: string) =>
  new AppError(
    'PAYMENT_BAD_STATE',
    `A ${status} payment cannot be refunded: only a completed, settled or partially paid payment received money`,
  );
export const refundExceedsPayment = (remaining_minor: number, requested_minor: number) =>
  new AppError(
    'REFUND_EXCEEDS_PAYMENT',
    remaining_minor === 0
      ? 'Refunds of this payment already add up to what it received'
      : `Only ${remaining_minor} (minor units) remain to refund; ${requested_minor} asked`,
    [{ field: 'body.amount', message: `at most ${remaining_minor}`, remaining: remaining_minor }],
  );
export const refundAmountInvalid = (message: string) =>
  new AppError('VALIDATION_ERROR', message, [{ field: 'body.amount', message }]);
export const refundInsufficientBalance = (details: ErrorDetail[]) =>
  new AppError(
    'REFUND_INSUFFICIENT_BALANCE',
    "Your available PAY does not cover this refund's hold; fund it or refund with funding merchant_transfer",
    details,
  );
export const refundNotCancellable = (status: string) =>
  new AppError('REFUND_BAD_STATE', `A ${status} refund cannot be canceled: the money has moved or the refund ended`);
export const refundSlipWaitsForBuyer = () =>
  new AppError(
    'REFUND_BAD_STATE',
    'This refund has a slip waiting for the buyer to confirm receipt; it can no longer be canceled',
  );
export const refundNotAwaitingProof = (status: string, why?: string) =>
  new AppError(
    'REFUND_BAD_STATE',
    why ?? `A ${status} refund takes no slip: only a pending refund with a known destination does`,
  );
export const refundEnded = (status: string) =>
  new AppError('REFUND_BAD_STATE', `A ${status} refund has ended; only a requires_action or pending refund moves`);
export const refundPayoutUnderway = (status: string) =>
  new AppError(
    'REFUND_BAD_STATE',
    `This refund's payout has buyers paying it already (its sell order is ${status}); it can no longer be canceled`,
  );
