import type { Executor } from '../../db/database.ts';
import { accounts } from '../ledger/port.ts';
import type { ExpectedTransfer } from '../ledger/reconcile.ts';
import { completionKeys } from './completion.ts';
import { feeOf } from './fees.ts';

/**
 * The transfers completed payments imply (see createPaymentCompletion): per leg the merchant's part and the fee, and
 * a sandbox seller's funding mint. Simulated sandbox payments (`synthetic_match`) never touch the ledger.
 */
export async function paymentExpectations(executor: Executor): Promise<ExpectedTransfer[]> {
  const legs = await executor
    .selectFrom('payments')
    .innerJoin('payment_legs', 'payment_legs.payment_id', 'payments.id')
    .select([
      'payments.id',
      'payments.merchant_id',
      'payments.is_sandbox',
      'payments.fee_bps',
      'payment_legs.match_order',
      'payment_legs.seller_id',
      'payment_legs.amount_micro_pay',
    ])
    .where('payments.synthetic_match', 'is', null)
    // Every leg of a completed payment; only the verified legs of a partly paid one (the others never moved PAY).
    .where((eb) =>
      eb.or([
        eb('payments.status', 'in', ['completed', 'settled']),
        eb.and([
          eb('payments.status', '=', 'partially_paid'),
          eb.exists(
            eb
              .selectFrom('payment_proofs')
              .select('payment_proofs.id')
              .whereRef('payment_proofs.payment_id', '=', 'payment_legs.payment_id')
              .whereRef('payment_proofs.match_order', '=', 'payment_legs.match_order')
              .where('payment_proofs.verdict', '=', 'verified'),
          ),
        ]),
      ]),
    )
    .execute();
  return legs.flatMap((leg) => {
    const amount = Number(leg.amount_micro_pay);
    const fee = leg.fee_bps === null ? 0 : feeOf(amount, leg.fee_bps);
    const seller = accounts.seller(leg.seller_id, leg.is_sandbox);
    const rows = [
      { table: 'payments', id: leg.id },
      { table: 'payment_legs', id: `${leg.id}:${leg.match_order}` },
    ];
    const expected: ExpectedTransfer[] = [];
    if (leg.is_sandbox) {
      expected.push({
        key: completionKeys.fund(leg.id, leg.match_order),
        kind: 'mint',
        debit_account: accounts.world(true),
        credit_account: seller,
        amount_micro_pay: amount,
        cause: 'sandbox',
        rows,
      });
    }
    if (amount > fee) {
      expected.push({
        key: completionKeys.leg(leg.id, leg.match_order),
        kind: 'transfer',
        debit_account: seller,
        credit_account: accounts.merchantAvailable(leg.merchant_id, leg.is_sandbox),
        amount_micro_pay: amount - fee,
        cause: 'payment_leg',
        rows,
      });
    }
    if (fee > 0) {
      expected.push({
        key: completionKeys.fee(leg.id, leg.match_order),
        kind: 'transfer',
        debit_account: seller,
        credit_account: accounts.fees(leg.is_sandbox),
        amount_micro_pay: fee,
        cause: 'fee',
        rows,
      });
    }
    return expected;
  });
}
