import { AppError } from '../../lib/errors.ts';

/** Every refusal of reference prices and quote locks, one named factory each. */

export const pricesUnavailable = (pairs: readonly string[]) =>
  new AppError('FX_PRICE_UNAVAILABLE', `No reference price for ${pairs.join(', ')}`);
export const priceUnavailableForLock = (pair: string) =>
  new AppError(
    'FX_PRICE_UNAVAILABLE',
    `No reference price for ${pair}; an operator sets it with PUT /admin/fx/reference-prices`,
  );
export const peggedPrice = (pair: string) =>
  new AppError('VALIDATION_ERROR', `${pair} is fixed at 1 (PAY's reference value is 1 USD)`, [
    { field: 'body.quote', message: 'pegged' },
  ]);
export const priceNotPositive = () =>
  new AppError('VALIDATION_ERROR', 'price must be greater than zero', [
    { field: 'body.price', message: 'must be > 0' },
  ]);
export const quoteLockUsedBy = (lock_id: string, payment_id: string | null) =>
  new AppError('QUOTE_LOCK_USED', `Quote lock ${lock_id} was already used by payment ${payment_id}`);
export const quoteLockUsed = (lock_id: string) =>
  new AppError('QUOTE_LOCK_USED', `Quote lock ${lock_id} was already used`);
export const quoteLockExpired = (lock_id: string, expires_at: Date) =>
  new AppError('QUOTE_LOCK_EXPIRED', `Quote lock ${lock_id} expired at ${expires_at.toISOString()}; request a new one`);
export const quoteLockMismatch = (lock_id: string, lock: { base: string; quote: string }, currency: string) =>
  new AppError(
    'QUOTE_LOCK_MISMATCH',
    `Quote lock ${lock_id} is for ${lock.base}/${lock.quote}, not a ${currency} trade`,
    [{ field: 'body.currency', message: `lock is for ${lock.quote}` }],
  );
