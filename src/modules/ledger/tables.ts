import type { Selectable } from 'kysely';
import type { TransferKind } from './port.ts';

export interface LedgerTables {
  ledger_accounts: {
    name: string;
    non_negative: boolean;
    /** An issuance account's is frozen: its moves add to its stripes (see ledger_issuance_stripes). */
    balance_micro_pay: number;
    created_at: Date;
  };
  /** An issuance account's balance is its row plus these, one per (account, stripe), never locked by a posting for long. */
  ledger_issuance_stripes: {
    account: string;
    stripe: number;
    delta_micro_pay: number;
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
