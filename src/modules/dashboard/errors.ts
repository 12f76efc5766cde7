import { AppError } from '../../lib/errors.ts';

/** Every refusal of the dashboard (forms, users), one named factory each; a form field is named as the form names it. */

// forms
export const fieldRequired = (name: string) => new AppError('VALIDATION_ERROR', `${name} is required`, [{ field: name, message: 'required' }]);
export const fieldNotOneOf = (name: string, values: readonly string[]) => new AppError('VALIDATION_ERROR', `${name} must be one of ${values.join(', ')}`, [{ field: name, message: 'unsupported' }]);
export const fiatAmountInvalid = (name: string) => new AppError('VALIDATION_ERROR', `${name} must be a positive amount with at most 2 decimals`, [{ field: name, message: 'invalid amount' }]);
export const payAmountInvalid = (name: string) => new AppError('VALIDATION_ERROR', `${name} must be a positive PAY amount with at most 6 decimals`, [{ field: name, message: 'invalid amount' }]);
export const scenarioUnknown = (scenarios: readonly string[]) => new AppError('VALIDATION_ERROR', `scenario must be one of ${scenarios.join(', ')}`);
export const graceHoursOutOfRange = () => new AppError('VALIDATION_ERROR', 'grace_hours must be a whole number from 0 to 168', [{ field: 'grace_hours', message: 'out of range' }]);
export const sinceInvalid = () => new AppError('VALIDATION_ERROR', 'since must be a date and time', [{ field: 'since', message: 'invalid' }]);
export const receiptFileRequired = () => new AppError('VALIDATION_ERROR', 'Choose the receipt file', [{ field: 'receipt', message: 'required' }]);
export const simulateInSandboxView = () => new AppError('SANDBOX_ONLY', 'Switch to the sandbox view to simulate payments');
export const confirmInLiveView = () => new AppError('SANDBOX_ONLY', 'Receiver-confirm moves live value; switch to the live view');
export const paymentNotFound = () => new AppError('NOT_FOUND', 'Payment not found');

// users
export const userExists = (email: string) => new AppError('MERCHANT_USER_EXISTS', `A dashboard user with email ${email} already exists`);
export const invitationInvalid = () => new AppError('UNAUTHORIZED', 'This invitation link is invalid, used or expired');
export const currentPasswordWrong = () => new AppError('UNAUTHORIZED', 'The current password is not correct');
