import { Type, type Static } from 'typebox';
import { Timestamp } from '../../http/schemas.ts';

/** Transfers, the invariant check and operator adjustments as the ledger API shows them: the response schemas, and their types. */

export const TransferSchema = Type.Object({
  id: Type.String(),
  key: Type.String(),
  kind: Type.Union([Type.Literal('mint'), Type.Literal('burn'), Type.Literal('transfer')]),
  debit_account: Type.String(),
  credit_account: Type.String(),
  amount_micro_pay: Type.Integer(),
  memo: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
  // True when the key had already been applied and this is the first result again.
  replayed: Type.Boolean(),
});

export const VerificationSchema = Type.Object({
  ok: Type.Boolean(),
  accounts: Type.Integer(),
  transfers: Type.Integer(),
  // Sum of every balance: must be 0.
  total_balance_micro_pay: Type.Integer(),
  minted_micro_pay: Type.Integer(),
  burned_micro_pay: Type.Integer(),
  // Sum of the balances of every non-issuance account: must equal minted - burned.
  circulation_micro_pay: Type.Integer(),
  // Non-negative accounts below zero: must be empty.
  negative_accounts: Type.Array(Type.String()),
  // Accounts whose stored balance differs from credits - debits of their transfers: must be empty.
  mismatched_accounts: Type.Array(Type.String()),
  problems: Type.Array(Type.String()),
});

/** `POST /admin/merchants/{id}/ledger-adjustments`. */
export const LedgerAdjustmentSchema = Type.Object({
  merchant_id: Type.String(),
  direction: Type.String(),
  amount_micro_pay: Type.Integer(),
  reason: Type.String(),
  is_sandbox: Type.Boolean(),
  actor_user_id: Type.String(),
  transfer: TransferSchema,
  available_micro_pay: Type.Integer(),
});

export type LedgerAdjustmentView = Static<typeof LedgerAdjustmentSchema>;
