import type { Executor } from '../../../db/database.ts';
import type { ExpectedTransfer } from '../../ledger/reconcile.ts';
import type { SupplyCause } from '../../ledger/supply.ts';

/** A transfer a business row implies; a mint or a burn names the supply cause it must be counted under. */
export type Expected = ExpectedTransfer & { supply?: SupplyCause };

/** A cross-flow identity that does not hold: what should equal what, and the rows behind it. */
export interface IdentityBreak {
  /** `identity:<name>:<scope>`, unique per break. */
  key: string;
  cause: ExpectedTransfer['cause'];
  detail: string;
  rows: ExpectedTransfer['rows'];
}

/**
 * One flow that moves PAY, as reconciliation sees it: the transfers its business rows imply, derived from those rows
 * with reconciliation's own arithmetic and account names (never by calling the code that posts), and the identities
 * its rows must satisfy among themselves. A new flow is one file here, listed in `FLOWS` (index.ts).
 */
export interface Flow {
  name: string;
  derive(executor: Executor): Promise<{ expected: Expected[]; breaks: IdentityBreak[] }>;
}
