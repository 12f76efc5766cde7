import { AppError } from '../../lib/errors.ts';
import { minorToDecimal, type Currency } from '../../lib/money.ts';

/** Every refusal of seller liquidity and allocation, one named factory each. */

export const insufficientLiquidity = (
  offer: { currency: Currency; payment_method: string },
  covered_minor: number,
  amount_minor: number,
) =>
  new AppError(
    'PAYMENT_INSUFFICIENT_LIQUIDITY',
    `Not enough ${offer.currency} ${offer.payment_method} liquidity: ${minorToDecimal(covered_minor, offer.currency)} of ${minorToDecimal(amount_minor, offer.currency)} available`,
  );
export const offersTakenConcurrently = () =>
  new AppError(
    'PAYMENT_INSUFFICIENT_LIQUIDITY',
    'The offers that could cover this payment were taken by concurrent payments; retry',
  );
export const legWorthNothing = (part_minor: number, currency: Currency, rate: string) =>
  new AppError(
    'PAYMENT_INSUFFICIENT_LIQUIDITY',
    `${minorToDecimal(part_minor, currency)} ${currency} buys less than 1 micro-PAY at ${rate}`,
  );
export const noSandboxSeller = (offer: { currency: string; payment_method: string }) =>
  new AppError('MATCHING_UNAVAILABLE', `No sandbox seller for ${offer.currency} ${offer.payment_method}`);
export const offersUnreadable = () =>
  new AppError('MATCHING_UNAVAILABLE', 'The matching service could not read offers');

// seller creation
export const rateNotPositive = () =>
  new AppError('VALIDATION_ERROR', 'rate must be greater than zero', [{ field: 'body.rate', message: 'must be > 0' }]);
export const methodUnsupportedForCurrency = (currency: string, payment_method: string) =>
  new AppError('VALIDATION_ERROR', `${currency} does not support ${payment_method}`, [
    { field: 'body.payment_method', message: 'unsupported for currency' },
  ]);
export const promptpayIdRequired = () =>
  new AppError('VALIDATION_ERROR', 'promptpay sellers need promptpay_id', [
    { field: 'body.promptpay_id', message: 'required' },
  ]);
export const payidRequired = () =>
  new AppError('VALIDATION_ERROR', 'payid sellers need payid', [{ field: 'body.payid', message: 'required' }]);
export const bankRequired = () =>
  new AppError('VALIDATION_ERROR', 'bank_transfer sellers need bank', [{ field: 'body.bank', message: 'required' }]);
