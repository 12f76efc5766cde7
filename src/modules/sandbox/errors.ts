import { AppError } from '../../lib/errors.ts';

/** Refusals of the sandbox module. */
export const sandboxKeysOnly = () => new AppError('SANDBOX_ONLY', 'The sandbox accepts test or sandbox keys only');
export const tooSmallToSplit = () =>
  new AppError(
    'VALIDATION_ERROR',
    'matched_partial_fill needs an amount of at least 2 minor units (two non-empty legs)',
    [{ field: 'body.amount', message: 'too small to split' }],
  );
