import type { Trx } from '../../db/database.ts';
import { accounts, type Ledger, type TransferCommand } from '../ledger/port.ts';
import { paymentFee, recordPaymentFee } from './fees.ts';
import type { PaymentCompletionPort } from './ports.ts';
import type { LegRow, PaymentRow } from './tables.ts';
import { assert } from '../../lib/assert.ts';

/** Ledger keys of a completed payment's postings: the merchant's part and the fee of each leg. */
export const completionKeys = {
  leg: (payment_id: string, match_order: number) => `payment:${payment_id}:leg:${match_order}`,
  fee: (payment_id: string, match_order: number) => `payment:${payment_id}:leg:${match_order}:fee`,
  fund: (payment_id: string, match_order: number) => `payment:${payment_id}:leg:${match_order}:fund`,
};

/**
 * Payment completion (of every leg, or of the verified legs of a partly paid payment) moves each leg's PAY from its seller to the merchant's available account less the settlement fee
 * (`payment:<id>:leg:<n>`), and the fee to the gateway's fees account (`payment:<id>:leg:<n>:fee`, when above 0), as
 * one multi-posting ledger command inside the completion transaction: every leg posts or none does (a refusal is
 * thrown with nothing posted, and the completion rolls back). The fee is recorded on the payment in the same
 * transaction. Synthetic sandbox sellers have unbounded liquidity, so the PAY a leg sells is first minted into the
 * sandbox seller's account (`payment:<id>:leg:<n>:fund`) in the same command; sandbox never touches live accounts.
 */
export function createPaymentCompletion(ledger: Ledger, fee_bps: number): PaymentCompletionPort {
  return {
    async onCompleted(trx: Trx, payment: PaymentRow, legs: readonly LegRow[]) {
      assert(legs.length > 0, `completed payment ${payment.id} has legs`);
      // The fee of what was received: the whole amount, or the verified legs' alone when the payment is partly paid.
      const fee = paymentFee(payment, legs, fee_bps);
      const merchant = accounts.merchantAvailable(payment.merchant_id, payment.is_sandbox);
      const postings: TransferCommand[] = [];
      for (const leg of legs) {
        // The allocator never writes a 0-PAY leg (checkedLegs, and payment_legs_worth_pay in the database).
        assert(
          leg.amount_micro_pay > 0,
          `leg ${leg.match_order} of payment ${payment.id} is worth ${leg.amount_micro_pay} micro-PAY`,
        );
        const seller = accounts.seller(leg.seller_id, payment.is_sandbox);
        const leg_fee = fee.legs_micro_pay.get(leg.match_order) ?? 0;
        const memo = `payment ${payment.id} leg ${leg.match_order}`;
        if (payment.is_sandbox) {
          postings.push({
            key: completionKeys.fund(payment.id, leg.match_order),
            kind: 'mint',
            debit_account: accounts.world(true),
            credit_account: seller,
            amount_micro_pay: leg.amount_micro_pay,
            memo: 'synthetic sandbox seller',
          });
        }
        // A fee of 100 % leaves the merchant nothing of the leg: no zero posting.
        if (leg.amount_micro_pay > leg_fee) {
          postings.push({
            key: completionKeys.leg(payment.id, leg.match_order),
            kind: 'transfer',
            debit_account: seller,
            credit_account: merchant,
            amount_micro_pay: leg.amount_micro_pay - leg_fee,
            memo,
          });
        }
        if (leg_fee > 0) {
          postings.push({
            key: completionKeys.fee(payment.id, leg.match_order),
            kind: 'transfer',
            debit_account: seller,
            credit_account: accounts.fees(payment.is_sandbox),
            amount_micro_pay: leg_fee,
            memo: `${memo} fee`,
          });
        }
      }
      // One command: every leg posts or none does. Postcondition: the sellers gave exactly the legs' PAY, of which the
      // fees account got exactly the payment's fee.
      const transfers = await ledger.transferAll(postings, { trx });
      const moved = transfers.filter((transfer) => transfer.kind === 'transfer');
      const legs_micro_pay = legs.reduce((sum, leg) => sum + leg.amount_micro_pay, 0);
      const moved_micro_pay = moved.reduce((sum, transfer) => sum + transfer.amount_micro_pay, 0);
      const fees_micro_pay = moved
        .filter((transfer) => transfer.credit_account === accounts.fees(payment.is_sandbox))
        .reduce((sum, transfer) => sum + transfer.amount_micro_pay, 0);
      assert(
        transfers.length === postings.length && moved_micro_pay === legs_micro_pay,
        `payment ${payment.id} posted ${moved_micro_pay} of its legs' ${legs_micro_pay} micro-PAY`,
      );
      assert(
        fees_micro_pay === fee.fee_micro_pay,
        `payment ${payment.id} posted ${fees_micro_pay} micro-PAY of fees, not ${fee.fee_micro_pay}`,
      );
      return recordPaymentFee(trx, payment, fee);
    },
  };
}
