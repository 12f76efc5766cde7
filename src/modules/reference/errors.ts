import { AppError } from '../../lib/errors.ts';

/** Refusals of the reference module (banks, PromptPay payloads). */
export const promptpayIdMalformed = () =>
  new AppError(
    'VALIDATION_ERROR',
    'promptpay_id must be a mobile number (10 digits), a national/tax id (13) or an e-wallet id (15)',
    [{ field: 'body.promptpay_id', message: 'malformed' }],
  );
export const bahtAmountMalformed = () =>
  new AppError('VALIDATION_ERROR', 'amount must be a non-negative number of baht with at most 2 decimals', [
    { field: 'body.amount', message: 'invalid' },
  ]);
export const bankDirectoryUnavailable = () => new AppError('INTERNAL', 'The bank directory is unavailable');
