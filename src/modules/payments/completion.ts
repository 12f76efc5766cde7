import type { Trx } from '../../db/database.ts';
import { accounts, type Ledger, type TransferCommand } from '../ledger/port.ts';
import type { PaymentCompletionPort } from './ports.ts';
import type { LegRow, PaymentRow } from './tables.ts';
import { assert } from '../../lib/assert.ts';

/**
 * Payment completion moves each leg's PAY from its seller to the merchant's available account, key
 * `payment:<id>:leg:<n>`, as one multi-posting ledger command inside the completion transaction: every leg posts
 * or none does (a refusal is thrown with nothing posted, and the completion rolls back). Synthetic sandbox sellers
 * have unbounded liquidity, so the PAY a leg sells is first minted into the sandbox seller's account (key
 * `payment:<id>:leg:<n>:fund`) in the same command; sandbox never touches live accounts.
 */
export function createPaymentCompletion(ledger: Ledger): PaymentCompletionPort {
  return {
    async onCompleted(trx: Trx, payment: PaymentRow, legs: readonly LegRow[]) {
      assert(legs.length > 0, `completed payment ${payment.id} has legs`);
      const postings: TransferCommand[] = [];
      for (const leg of legs) {
        // The allocator never writes a 0-PAY leg (checkedLegs, and payment_legs_worth_pay in the database).
        assert(leg.amount_micro_pay > 0, `leg ${leg.match_order} of payment ${payment.id} is worth ${leg.amount_micro_pay} micro-PAY`);
        const seller = accounts.seller(leg.seller_id, payment.is_sandbox);
        const key = `payment:${payment.id}:leg:${leg.match_order}`;
        if (payment.is_sandbox) {
          postings.push({ key: `${key}:fund`, kind: 'mint', debit_account: accounts.world(true), credit_account: seller, amount_micro_pay: leg.amount_micro_pay, memo: 'synthetic sandbox seller' });
        }
        postings.push({
          key,
          kind: 'transfer',
          debit_account: seller,
          credit_account: accounts.merchantAvailable(payment.merchant_id, payment.is_sandbox),
          amount_micro_pay: leg.amount_micro_pay,
          memo: `payment ${payment.id} leg ${leg.match_order}`,
        });
      }
      // One command: every leg posts or none does. Postcondition: the merchant is credited exactly the legs' PAY.
      const transfers = await ledger.transferAll(postings, { trx });
      const legs_micro_pay = legs.reduce((sum, leg) => sum + leg.amount_micro_pay, 0);
      const credited_micro_pay = transfers.filter((transfer) => transfer.kind === 'transfer').reduce((sum, transfer) => sum + transfer.amount_micro_pay, 0);
      assert(transfers.length === postings.length && credited_micro_pay === legs_micro_pay, `payment ${payment.id} posted ${credited_micro_pay} of its legs' ${legs_micro_pay} micro-PAY`);
    },
  };
}
