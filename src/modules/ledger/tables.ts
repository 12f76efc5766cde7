import type { ColumnType, Selectable } from 'kysely';
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
  /**
   * PAY an account owes: the part of a move (`origin_key`, its ledger key) the debtor had already spent. Owed to
   * `creditor_account` (an issuance account: burned; another merchant: paid), collected from the debtor's next credits.
   */
  pay_shortfalls: {
    id: string;
    origin_key: string;
    debtor_account: string;
    creditor_account: string;
    amount_micro_pay: number;
    collected_micro_pay: ColumnType<number, number | undefined, number>;
    memo: string | null;
    created_at: Date;
  };
  /** One collection of a shortfall from one credit: a ledger posting of its own (`key`). */
  pay_shortfall_collections: {
    key: string;
    shortfall_id: string;
    amount_micro_pay: number;
    /** The ledger key of the credit it was collected from. */
    credit_key: string;
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
