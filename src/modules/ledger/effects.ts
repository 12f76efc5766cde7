import type { Trx } from '../../db/database.ts';
import { assert } from '../../lib/assert.ts';
import { fiatMinorToMicroPay } from '../../lib/money.ts';
import type { SellerFundingPort } from '../matching/service.ts';
import type { PaymentCompletionPort } from '../payments/ports.ts';
import type { LegRow, PaymentRow } from '../payments/tables.ts';
import { accounts, type Ledger, type TransferCommand } from './port.ts';

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

/**
 * A live seller's liquidity is backed by PAY: on creation the PAY its liquidity is worth at its rate (rounded down,
 * like every leg) is minted into its account, key `seller:<id>:funding`, in the creation transaction. Legs of one
 * seller never sum to more than that, because each leg rounds down too.
 */
export function createSellerFunding(ledger: Ledger): SellerFundingPort {
  return {
    async onSellerCreated(trx, seller) {
      const amount_micro_pay = fiatMinorToMicroPay(seller.liquidity_minor, seller.currency, seller.rate);
      if (amount_micro_pay <= 0) return;
      await ledger.transfer(
        {
          key: `seller:${seller.id}:funding`,
          kind: 'mint',
          debit_account: accounts.world(seller.is_sandbox),
          credit_account: accounts.seller(seller.id, seller.is_sandbox),
          amount_micro_pay,
          memo: `liquidity ${seller.liquidity_minor} ${seller.currency} at ${seller.rate}`,
        },
        { trx },
      );
    },
  };
}
