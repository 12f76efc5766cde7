/**
 * The PAY ledger port. Every other module moves PAY through this interface only, never through the ledger's
 * tables. Two adapters implement it: in-process (default; joins the caller's transaction when given `{ trx }`) and
 * HTTP (`LEDGER_URL`; a separate ledger process, so "ledger unavailable" is a real network failure).
 *
 * Model: double entry. A transfer debits one account and credits another by the same positive amount in one
 * transaction, so the sum of all balances is always zero. Issuance accounts (`<mode>:issuance:<name>`) are the
 * only ones allowed below zero: a mint debits one, a burn credits one, so PAY in circulation (the sum of every
 * other account) equals minted minus burned.
 *
 * Errors (AppError codes):
 * - LEDGER_INSUFFICIENT_FUNDS: the debit would take a non-negative account below zero; nothing is written.
 * - LEDGER_IDEMPOTENCY_CONFLICT: the key was used before with other fields (kind, accounts or amount).
 * - LEDGER_UNAVAILABLE: the ledger could not be reached or failed (HTTP adapter only); the outcome is unknown,
 *   so the caller rolls back and retries with the same key, which is safe: a transfer that did land is replayed.
 * - VALIDATION_ERROR: a malformed command (bad account name, accounts of two modes, kind not matching the
 *   accounts, amount not a positive safe integer). A programming error in the caller.
 */
import type { Static } from 'typebox';
import type { Trx } from '../../db/database.ts';
import type { TransferSchema, VerificationSchema } from './schema.ts';

export type TransferKind = 'mint' | 'burn' | 'transfer';

export interface TransferCommand {
  /** Idempotency key: the same key with the same fields returns the first result; other fields are refused. */
  key: string;
  kind: TransferKind;
  debit_account: string;
  credit_account: string;
  amount_micro_pay: number;
  /** Free text for people; not part of the command's identity (a retry may word it differently). */
  memo?: string | undefined;
}

/** One applied transfer, as the ledger API shows it; `replayed` when the key had already been applied. */
export type TransferResult = Static<typeof TransferSchema>;

/** Most transfers one batch or one multi-posting command may carry. */
export const LEDGER_BATCH_MAX = 1000;

/** One item of a batch: its transfer, or the error it alone got (nothing was written for it). */
export type BatchItemResult =
  | { ok: true; transfer: TransferResult }
  | {
      ok: false;
      error: {
        code: 'LEDGER_INSUFFICIENT_FUNDS' | 'LEDGER_IDEMPOTENCY_CONFLICT' | 'VALIDATION_ERROR';
        message: string;
      };
    };

export interface LedgerCallOptions {
  /**
   * The caller's open transaction. The in-process adapter writes inside it (atomic with the business rows). The
   * HTTP adapter cannot share it and ignores it: its write commits on its own, and the idempotency key makes the
   * caller's retry after a rollback safe (the transfer is replayed, never applied twice).
   */
  trx?: Trx | undefined;
}

export interface AccountBalance {
  account: string;
  balance_micro_pay: number;
  /** False only for issuance accounts. */
  non_negative: boolean;
}

/** The invariant check's answer (`GET /admin/ledger/verify`, `mpay ledger verify`): see VerificationSchema. */
export type LedgerVerification = Static<typeof VerificationSchema>;

export interface Ledger {
  readonly kind: 'in_process' | 'http';
  transfer(command: TransferCommand, options?: LedgerCallOptions): Promise<TransferResult>;
  /**
   * Many independent transfers in one database transaction (one round trip), applied in order, each with its own
   * result: a refused or malformed item writes nothing and does not stop the others (so a later item may depend on
   * an earlier one's credit). At most LEDGER_BATCH_MAX items. A failure of the whole call (LEDGER_UNAVAILABLE, a
   * database error) means no item is known to have applied; retrying with the same keys is safe.
   */
  transferBatch(commands: readonly TransferCommand[], options?: LedgerCallOptions): Promise<BatchItemResult[]>;
  /**
   * Several postings as one command (a transaction of postings, as in Formance; e.g. every leg of a payment):
   * all apply or none does. Each posting keeps its own idempotency key (replayed ones count as applied). The first
   * refusal is thrown (LEDGER_INSUFFICIENT_FUNDS, LEDGER_IDEMPOTENCY_CONFLICT, VALIDATION_ERROR) after the
   * postings before it were undone, so a caller that catches it holds a consistent transaction.
   */
  transferAll(commands: readonly TransferCommand[], options?: LedgerCallOptions): Promise<TransferResult[]>;
  /** Balance of one account; 0 when the account has never been used. */
  balance(account: string, options?: LedgerCallOptions): Promise<number>;
  /** Balances of several accounts; null for an account that has never been used. */
  balances(accounts: readonly string[], options?: LedgerCallOptions): Promise<Map<string, number | null>>;
  /** Sum credited to an account at or after `since` (trailing volume for the buffer threshold). */
  creditedSince(account: string, since: Date, options?: LedgerCallOptions): Promise<number>;
  /** The invariant check (`mpay ledger verify`). */
  verify(): Promise<LedgerVerification>;
}

const mode = (is_sandbox: boolean) => (is_sandbox ? 'sandbox' : 'live');

/**
 * Account names. Every name starts with its mode, and a transfer between two modes is refused, so sandbox
 * traffic can never touch a live account.
 */
export const accounts = {
  merchantAvailable: (merchant_id: string, is_sandbox: boolean) =>
    `${mode(is_sandbox)}:merchant:${merchant_id}:available`,
  merchantBuffer: (merchant_id: string, is_sandbox: boolean) => `${mode(is_sandbox)}:merchant:${merchant_id}:buffer`,
  merchantReserve: (merchant_id: string, is_sandbox: boolean) => `${mode(is_sandbox)}:merchant:${merchant_id}:reserve`,
  /** PAY held for refunds funded from the merchant's balance (DESIGN 3c), until each is paid out or given back. */
  merchantRefundHold: (merchant_id: string, is_sandbox: boolean) =>
    `${mode(is_sandbox)}:merchant:${merchant_id}:refund_hold`,
  seller: (seller_id: string, is_sandbox: boolean) => `${mode(is_sandbox)}:seller:${seller_id}`,
  /** The default issuance account ("world"): PAY minted by the gateway itself (pending funds, seller funding). */
  world: (is_sandbox: boolean) => `${mode(is_sandbox)}:issuance:world`,
  /** The configured mint source (LEDGER_MINT_SOURCE_ACCOUNT) as an issuance account of the mode. */
  mintSource: (name: string, is_sandbox: boolean) => `${mode(is_sandbox)}:issuance:${name}`,
  /** Operator adjustments are audited mints and burns against this issuance account. */
  adjustments: (is_sandbox: boolean) => `${mode(is_sandbox)}:issuance:adjustments`,
  fees: (is_sandbox: boolean) => `${mode(is_sandbox)}:fees`,
} as const;

export const ACCOUNT_PATTERN = /^(live|sandbox):[A-Za-z0-9_.:-]{1,200}$/;
const ISSUANCE_PATTERN = /^(live|sandbox):issuance:[A-Za-z0-9_.-]{1,100}$/;

export function isIssuanceAccount(account: string): boolean {
  return ISSUANCE_PATTERN.test(account);
}

export function accountMode(account: string): 'live' | 'sandbox' {
  return account.startsWith('sandbox:') ? 'sandbox' : 'live';
}
