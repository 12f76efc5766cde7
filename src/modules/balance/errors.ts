import { AppError } from '../../lib/errors.ts';

/** Refusals of the balance module. */
export const notOwnBalance = () => new AppError('FORBIDDEN', 'You may read only your own balance');
