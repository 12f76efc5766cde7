import { AppError } from '../../lib/errors.ts';

/** Every refusal of the payments module, one named factory each (the code list and statuses: lib/errors.ts, http/errors.ts). */

export const invalidAmount = (currency: string) =>
  new AppError(
    'VALIDATION_ERROR',
    `amount must be a positive integer in minor units or a decimal string with at most 2 decimals for ${currency}`,
    [{ field: 'body.amount', message: 'invalid amount' }],
  );
export const paymentMethodUnsupported = (currency: string, supported: readonly string[], payment_method: string) =>
  new AppError('VALIDATION_ERROR', `${currency} payments support ${supported.join(', ')}, not ${payment_method}`, [
    { field: 'body.payment_method', message: 'unsupported for currency' },
  ]);
export const duplicateOrderId = (order_id: string, existing_payment_id: string | undefined) =>
  new AppError(
    'PAYMENT_DUPLICATE_ORDER_ID',
    `order_id ${order_id} already has ${existing_payment_id ? `payment ${existing_payment_id}` : 'a payment'}`,
  );
export const quoteLocksUnavailable = () =>
  new AppError('VALIDATION_ERROR', 'quote locks are not available on this server', [
    { field: 'body.quote_lock_id', message: 'unsupported' },
  ]);
export const paymentNotCancellable = (status: string) =>
  new AppError('PAYMENT_BAD_STATE', `Only created or matching payments can be cancelled; this one is ${status}`);
export const createPaymentsGone = () =>
  new AppError('GONE', 'POST /v1/payments passed its sunset; use POST /v1/trades');

// a payee's decision
export const legNotAwaitingPayee = (status: string) =>
  new AppError(
    'LEG_NOT_AWAITING_PAYEE',
    `Only a leg whose slip waits for its payee can be confirmed or rejected; this one is ${status}`,
  );

// proofs
export const proofNotAccepted = (status: string) =>
  new AppError(
    'PAYMENT_BAD_STATE',
    `A proof can be uploaded only while the payment is matched, payment_pending or confirming with a leg still unproven; it is ${status}`,
  );
export const proofDuplicate = () =>
  new AppError('PROOF_DUPLICATE', 'This file was already uploaded as proof for another payment or another leg');
export const expiredBeforeProof = () =>
  new AppError('PAYMENT_BAD_STATE', 'The payment expired before the proof arrived');
export const proofLegUnknown = (leg: number, legs: number) =>
  new AppError('VALIDATION_ERROR', `leg ${leg} is not a leg of this payment (it has ${legs})`, [
    { field: 'body.leg', message: 'unknown leg' },
  ]);
export const proofLegTaken = (leg: number) => new AppError('PAYMENT_BAD_STATE', `leg ${leg} already has a slip`);
export const proofAllLegsTaken = () =>
  new AppError('PAYMENT_BAD_STATE', 'every leg of this payment already has a slip');
export const proofTooManyParts = (parts: number, open_legs: number) =>
  new AppError(
    'VALIDATION_ERROR',
    `${parts} proof parts for ${open_legs} leg(s) still without a slip: send one part per leg`,
    [{ field: 'body.proof', message: 'too many parts' }],
  );
export const proofLegWithParts = () =>
  new AppError('VALIDATION_ERROR', 'a `leg` field goes with exactly one `proof` part', [
    { field: 'body.leg', message: 'one part per leg field' },
  ]);
