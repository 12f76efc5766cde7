import { ACCOUNT_PATTERN, accountMode, isIssuanceAccount, type TransferCommand } from './port.ts';
import { malformedTransfer } from './errors.ts';

/**
 * Checks a command before anything is read or written, in this order: amount, account names, same mode, kind
 * against the accounts. Both adapters (and the ledger's HTTP route) run the same checks.
 */
export function checkCommand(command: TransferCommand): void {
  const fail = (field: string, message: string) => {
    throw malformedTransfer(field, message);
  };
  if (typeof command.key !== 'string' || command.key.length < 1 || command.key.length > 255)
    fail('key', 'must be 1 to 255 characters');
  if (!Number.isSafeInteger(command.amount_micro_pay) || command.amount_micro_pay <= 0)
    fail('amount_micro_pay', 'must be a positive safe integer');
  if (!ACCOUNT_PATTERN.test(command.debit_account)) fail('debit_account', 'is not an account name');
  if (!ACCOUNT_PATTERN.test(command.credit_account)) fail('credit_account', 'is not an account name');
  if (command.debit_account === command.credit_account) fail('credit_account', 'must differ from debit_account');
  if (accountMode(command.debit_account) !== accountMode(command.credit_account))
    fail('credit_account', 'must be of the same mode (live or sandbox) as debit_account');
  const debit_issuance = isIssuanceAccount(command.debit_account);
  const credit_issuance = isIssuanceAccount(command.credit_account);
  if (command.kind === 'mint' && !(debit_issuance && !credit_issuance))
    fail('kind', 'mint must debit an issuance account and credit another');
  if (command.kind === 'burn' && !(!debit_issuance && credit_issuance))
    fail('kind', 'burn must credit an issuance account from another');
  if (command.kind === 'transfer' && (debit_issuance || credit_issuance))
    fail('kind', 'transfer must not touch an issuance account (use mint or burn)');
  if (!['mint', 'burn', 'transfer'].includes(command.kind)) fail('kind', 'must be mint, burn or transfer');
}
