import { basisPointsOf, expectedAccount, microPayWorth } from '../accounts.ts';
import type { Expected, Flow, IdentityBreak } from './flow.ts';

/** Statuses of a payment whose legs were paid and posted. */
const POSTED = ['completed', 'settled'] as const;

/**
 * Payment legs (live and sandbox, simulations included; of a partly paid payment, its verified legs): per leg the merchant's part and the fee, each leg's fiat fee
 * `floor(leg fiat × fee_bps / 10000)` and its PAY fee that fiat at the leg's rate (rounded down); a sandbox leg's
 * synthetic seller is minted the leg first. The payment's recorded `fee_minor` and `fee_micro_pay` must be the sums
 * of its legs' fees (one fee in two units).
 */
export const paymentsFlow: Flow = {
  name: 'payments',
  async derive(executor) {
    const legs = await executor
      .selectFrom('payments')
      .innerJoin('payment_legs', 'payment_legs.payment_id', 'payments.id')
      .select([
        'payments.id',
        'payments.merchant_id',
        'payments.is_sandbox',
        'payments.currency',
        'payments.fee_bps',
        'payments.fee_minor',
        'payments.fee_micro_pay',
        'payment_legs.match_order',
        'payment_legs.seller_id',
        'payment_legs.allocated_fiat_amount',
        'payment_legs.rate',
        'payment_legs.amount_micro_pay',
      ])
      // Every leg of a completed payment; only the verified legs of a partly paid one (the others moved no PAY).
      .where((eb) =>
        eb.or([
          eb('payments.status', 'in', [...POSTED]),
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
      .orderBy('payments.id')
      .orderBy('payment_legs.match_order')
      .execute();
    const expected: Expected[] = [];
    const totals = new Map<string, { minor: number; micro_pay: number; recorded: [number | null, number | null] }>();
    for (const leg of legs) {
      const amount = Number(leg.amount_micro_pay);
      const fee_minor = leg.fee_bps === null ? 0 : basisPointsOf(Number(leg.allocated_fiat_amount), leg.fee_bps);
      const fee = fee_minor === 0 ? 0 : microPayWorth(fee_minor, leg.currency, leg.rate);
      const total = totals.get(leg.id) ?? {
        minor: 0,
        micro_pay: 0,
        recorded: [
          leg.fee_minor === null ? null : Number(leg.fee_minor),
          leg.fee_micro_pay === null ? null : Number(leg.fee_micro_pay),
        ],
      };
      total.minor += fee_minor;
      total.micro_pay += fee;
      totals.set(leg.id, total);
      const seller = expectedAccount.seller(leg.seller_id, leg.is_sandbox);
      const rows = [
        { table: 'payments', id: leg.id },
        { table: 'payment_legs', id: `${leg.id}:${leg.match_order}` },
      ];
      const key = `payment:${leg.id}:leg:${leg.match_order}`;
      if (leg.is_sandbox)
        expected.push({
          key: `${key}:fund`,
          kind: 'mint',
          debit_account: expectedAccount.world(true),
          credit_account: seller,
          amount_micro_pay: amount,
          cause: 'sandbox',
          supply: 'payment_synthetic_seller',
          rows,
        });
      if (amount > fee)
        expected.push({
          key,
          kind: 'transfer',
          debit_account: seller,
          credit_account: expectedAccount.available(leg.merchant_id, leg.is_sandbox),
          amount_micro_pay: amount - fee,
          cause: 'payment_leg',
          rows,
        });
      if (fee > 0)
        expected.push({
          key: `${key}:fee`,
          kind: 'transfer',
          debit_account: seller,
          credit_account: expectedAccount.fees(leg.is_sandbox),
          amount_micro_pay: fee,
          cause: 'fee',
          rows,
        });
    }
    const breaks: IdentityBreak[] = [];
    for (const [id, total] of totals) {
      const [minor, micro_pay] = total.recorded;
      if (minor === null && micro_pay === null && total.minor === 0) continue;
      if (minor !== total.minor || micro_pay !== total.micro_pay)
        breaks.push({
          key: `identity:payment_fee:${id}`,
          cause: 'fee',
          detail: `payment records a fee of ${minor} minor / ${micro_pay} micro-PAY; its legs' fees are ${total.minor} minor / ${total.micro_pay} micro-PAY`,
          rows: [{ table: 'payments', id }],
        });
    }
    return { expected, breaks };
  },
};
