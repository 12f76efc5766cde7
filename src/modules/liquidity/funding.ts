import { fiatMinorToMicroPay } from '../../lib/money.ts';
import { accounts, type Ledger } from '../ledger/port.ts';
import type { SellerFundingPort } from './sellers.ts';

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
