import { AppError } from '../../lib/errors.ts';
import type { TransferCommand } from './port.ts';

/** Every refusal of the PAY ledger, one named factory each (which method returns which: port.ts). */

export const malformedTransfer = (field: string, message: string) =>
  new AppError('VALIDATION_ERROR', `Ledger transfer ${field} ${message}`, [{ field, message }]);
export const postingNotApplied = (key: string) =>
  new AppError(
    'VALIDATION_ERROR',
    `Ledger transfer ${key} was not applied: another posting of its command was refused`,
  );
export const batchSizeOutOfRange = (max: number) =>
  new AppError('VALIDATION_ERROR', `A ledger batch carries 1 to ${max} transfers`, [
    { field: 'transfers', message: `1 to ${max} items` },
  ]);
export const insufficientFunds = (command: Pick<TransferCommand, 'debit_account' | 'amount_micro_pay'>) =>
  new AppError(
    'LEDGER_INSUFFICIENT_FUNDS',
    `Account ${command.debit_account} has less than ${command.amount_micro_pay} micro-PAY`,
    [{ field: 'debit_account', message: 'insufficient funds', account: command.debit_account }],
  );
export const keyUsedForAnotherTransfer = (
  key: string,
  existing: Pick<TransferCommand, 'kind' | 'debit_account' | 'credit_account' | 'amount_micro_pay'>,
) =>
  new AppError('LEDGER_IDEMPOTENCY_CONFLICT', `Ledger key ${key} was already used for another transfer`, [
    {
      field: 'key',
      message: 'used with other fields',
      existing: {
        kind: existing.kind,
        debit_account: existing.debit_account,
        credit_account: existing.credit_account,
        amount_micro_pay: existing.amount_micro_pay,
      },
    },
  ]);
export const ledgerUnreachable = (base_url: string, reason: string) =>
  new AppError('LEDGER_UNAVAILABLE', `Ledger at ${base_url} is unreachable: ${reason}`);
export const ledgerAnswered = (status: number, code: string | undefined) =>
  new AppError('LEDGER_UNAVAILABLE', `Ledger answered ${status}${code ? ` ${code}` : ''}`);
export const accountNotFound = (name: string) => new AppError('NOT_FOUND', `Ledger account ${name} not found`);
