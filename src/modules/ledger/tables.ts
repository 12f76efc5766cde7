import type { Selectable } from 'kysely';
import type { TransferKind } from './port.ts';

export interface LedgerTables {
  ledger_accounts: {
    name: string;
    non_negative: boolean;
    balance_micro_pay: number;
    created_at: Date;
  };
  ledger_transfers: {
    id: string;
    key: string;
    kind: TransferKind;
    debit_account: string;
    credit_account: string;
    amount_micro_pay: number;
    memo: string | null;
    created_at: Date;
  };
}

export type TransferRow = Selectable<LedgerTables['ledger_transfers']>;
