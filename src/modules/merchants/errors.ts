import { AppError } from '../../lib/errors.ts';

/** Every refusal of the merchants module (credentials, keys), one named factory each. */

export const jwtLifetimeTooLong = (max_seconds: number, field: string) =>
  new AppError('VALIDATION_ERROR', `A merchant JWT lives at most ${max_seconds} seconds (JWT_MAX_LIFETIME_SECONDS)`, [
    { field, message: `must be <= ${max_seconds}` },
  ]);
export const graceOutOfRange = (max_seconds: number) =>
  new AppError('VALIDATION_ERROR', `grace_seconds must be 0 to ${max_seconds}`, [
    { field: 'grace_seconds', message: 'out of range' },
  ]);
export const keyAlreadyRolled = () =>
  new AppError('FORBIDDEN', 'This key was already rolled or revoked; roll its successor');
