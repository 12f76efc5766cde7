import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { notFound } from '../../lib/errors.ts';
import { recordAdminAction, type AdminActor } from '../audit/service.ts';
import { accounts, type Ledger } from './port.ts';
import type { LedgerAdjustmentView } from './schema.ts';

export interface AdjustmentInput {
  amount_micro_pay: number;
  direction: 'credit' | 'debit';
  reason: string;
  is_sandbox?: boolean | undefined;
  /** Which of the merchant's accounts: `available` (default) or `buffer` (the PAY the balance view counts as buffer). */
  account?: 'available' | 'buffer' | undefined;
}

/**
 * `POST /admin/merchants/{id}/ledger-adjustments`: an operator's audited mint (credit) or burn (debit) on the
 * merchant's available account, against the adjustments issuance account. One transaction holds the admin audit row
 * and (in-process) the transfer; the ledger call comes last so a ledger failure leaves no audit row. The optional
 * Idempotency-Key makes the ledger key, so a retried request replays instead of adjusting twice (and writes no
 * second audit row).
 */
export async function adjustMerchantLedger(
  deps: { db: Db; clock: Clock; ledger: Ledger },
  actor: AdminActor,
  merchant_id: string,
  input: AdjustmentInput,
  idempotency_key: string | undefined,
): Promise<{ replayed: boolean; view: LedgerAdjustmentView }> {
  const is_sandbox = input.is_sandbox ?? false;
  const merchant = await deps.db.selectFrom('merchants').select('id').where('id', '=', merchant_id).executeTakeFirst();
  if (!merchant) throw notFound('Merchant');
  const merchant_account =
    input.account === 'buffer'
      ? accounts.merchantBuffer(merchant_id, is_sandbox)
      : accounts.merchantAvailable(merchant_id, is_sandbox);
  const adjustments = accounts.adjustments(is_sandbox);
  const key = `adjustment:${merchant_id}:${idempotency_key ?? randomUUID()}`;
  return deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const transfer = await deps.ledger.transfer(
      input.direction === 'credit'
        ? {
            key,
            kind: 'mint',
            debit_account: adjustments,
            credit_account: merchant_account,
            amount_micro_pay: input.amount_micro_pay,
            memo: input.reason,
          }
        : {
            key,
            kind: 'burn',
            debit_account: merchant_account,
            credit_account: adjustments,
            amount_micro_pay: input.amount_micro_pay,
            memo: input.reason,
          },
      { trx },
    );
    if (!transfer.replayed) {
      await recordAdminAction(trx, {
        at: now,
        actor,
        action: `ledger.adjustment.${input.direction}`,
        target_type: 'merchant',
        target_id: merchant_id,
        details: {
          amount_micro_pay: input.amount_micro_pay,
          reason: input.reason,
          is_sandbox,
          account: input.account ?? 'available',
          transfer_id: transfer.id,
          ledger_key: key,
        },
      });
    }
    const available_micro_pay = await deps.ledger.balance(accounts.merchantAvailable(merchant_id, is_sandbox), { trx });
    return {
      replayed: transfer.replayed,
      view: {
        merchant_id,
        direction: input.direction,
        amount_micro_pay: input.amount_micro_pay,
        reason: input.reason,
        is_sandbox,
        actor_user_id: actor.actor_user_id,
        transfer,
        available_micro_pay,
      },
    };
  });
}
