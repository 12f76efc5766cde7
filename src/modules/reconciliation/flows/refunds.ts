import { sql } from 'kysely';
import { expectedAccount } from '../accounts.ts';
import type { Expected, Flow, IdentityBreak } from './flow.ts';

/**
 * Refunds paid from the merchant's PAY (funding pay_balance, DESIGN 3c): each holds the payment's PAY before its fee
 * times the refund's share of what the payment received (its verified legs' fiat), rounded up (available -> refund hold, `refund:<id>:hold`). The hold
 * goes back to available (`:release`) when the refund failed or was canceled before its payout, or when its sell order
 * took it over (the sell order's own reserve follows); a sandbox simulation's payout burns it (`:payout`). The amount
 * is derived here from the payment's legs, and the refund's recorded `hold_micro_pay` must agree.
 */
export const refundsFlow: Flow = {
  name: 'refunds',
  async derive(executor) {
    const rows = await executor
      .selectFrom('refunds')
      .innerJoin('payments', 'payments.id', 'refunds.payment_id')
      .select([
        'refunds.id',
        'refunds.merchant_id',
        'refunds.is_sandbox',
        'refunds.status',
        'refunds.amount_minor',
        'refunds.hold_micro_pay',
        'refunds.sell_order_id',
        // the legs that credited the merchant: all of a completed payment's, the verified ones of a partly paid one
        sql<string>`(select coalesce(sum(l.amount_micro_pay), 0)::text from payment_legs l where l.payment_id = payments.id and (payments.status <> 'partially_paid' or exists (select 1 from payment_proofs pp where pp.payment_id = l.payment_id and pp.match_order = l.match_order and pp.verdict = 'verified')))`.as(
          'legs_micro_pay',
        ),
        sql<string>`(select coalesce(sum(l.allocated_fiat_amount), 0)::text from payment_legs l where l.payment_id = payments.id and (payments.status <> 'partially_paid' or exists (select 1 from payment_proofs pp where pp.payment_id = l.payment_id and pp.match_order = l.match_order and pp.verdict = 'verified')))`.as(
          'received_minor',
        ),
      ])
      .where('refunds.funding', '=', 'pay_balance')
      .orderBy('refunds.id')
      .execute();
    const expected: Expected[] = [];
    const breaks: IdentityBreak[] = [];
    for (const refund of rows) {
      const numerator = BigInt(refund.legs_micro_pay) * BigInt(refund.amount_minor);
      const received = BigInt(refund.received_minor);
      const hold = received === 0n ? 0 : Number((numerator + received - 1n) / received);
      const row = [{ table: 'refunds', id: refund.id }];
      if (refund.hold_micro_pay === null || Number(refund.hold_micro_pay) !== hold)
        breaks.push({
          key: `identity:refund_hold:${refund.id}`,
          cause: 'refund',
          detail: `refund ${refund.id} records a hold of ${refund.hold_micro_pay} micro-PAY; its payment's legs give ${hold}`,
          rows: row,
        });
      const available = expectedAccount.available(refund.merchant_id, refund.is_sandbox);
      const held = expectedAccount.refundHold(refund.merchant_id, refund.is_sandbox);
      const base = { amount_micro_pay: hold, cause: 'refund' as const, rows: row };
      expected.push({
        key: `refund:${refund.id}:hold`,
        kind: 'transfer',
        debit_account: available,
        credit_account: held,
        ...base,
      });
      if (refund.sell_order_id !== null || refund.status === 'failed' || refund.status === 'canceled')
        expected.push({
          key: `refund:${refund.id}:release`,
          kind: 'transfer',
          debit_account: held,
          credit_account: available,
          ...base,
        });
      else if (refund.status === 'succeeded')
        expected.push({
          key: `refund:${refund.id}:payout`,
          kind: 'burn',
          debit_account: held,
          credit_account: expectedAccount.world(refund.is_sandbox),
          supply: 'sell_order_completion',
          ...base,
        });
    }
    return { expected, breaks };
  },
};
