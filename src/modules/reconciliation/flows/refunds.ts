import { sql } from 'kysely';
import { expectedAccount } from '../accounts.ts';
import type { Expected, Flow, IdentityBreak } from './flow.ts';

/**
 * Refunds paid from the merchant's PAY (funding pay_balance, DESIGN 3c): each holds the payment's PAY before its fee
 * times the refund's share of what the payment received (its verified legs' fiat), rounded up (available -> refund
 * hold, `refund:<id>:hold`). A live refund whose destination is known is paid out by a sell order: the hold moves into
 * that order's reserve (`sell_order:<order>:reserve`, refund hold -> reserve, derived here; the order's release or
 * burn after that is the order book's). A refund that failed or was canceled without a sell order gives the hold back
 * to available (`:release`); a sandbox simulation's payout burns it (`:payout`). The amount is derived here from the
 * payment's legs, and the refund's recorded `hold_micro_pay` must agree.
 *
 * Identities: a refund's sell order is the refund's (it names the refund back, same merchant and mode), sells the
 * hold for the refund's amount in the refund's currency, and ended as the refund did (succeeded: completed; failed or
 * canceled: failed, or never filled); every sell order that names a refund is that refund's.
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
        'refunds.currency',
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
    const payouts = new Map(
      (
        await executor
          .selectFrom('sell_orders')
          .select([
            'id',
            'refund_id',
            'merchant_id',
            'is_sandbox',
            'status',
            'amount_micro_pay',
            'filled_micro_pay',
            'target_currency',
            'target_fiat_amount',
          ])
          .where('refund_id', 'is not', null)
          .execute()
      ).map((order) => [order.id, order]),
    );
    const paid_out = new Set(rows.flatMap((refund) => (refund.sell_order_id ? [refund.sell_order_id] : [])));
    const expected: Expected[] = [];
    const breaks: IdentityBreak[] = [];
    for (const order of payouts.values())
      if (!paid_out.has(order.id))
        breaks.push({
          key: `identity:refund_payout:${order.id}`,
          cause: 'refund',
          detail: `sell order ${order.id} names refund ${order.refund_id}, which is not paid out by it`,
          rows: [{ table: 'sell_orders', id: order.id }],
        });
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
      if (refund.sell_order_id !== null) {
        const order = payouts.get(refund.sell_order_id);
        const why = payoutMismatch(refund, hold, order);
        if (why)
          breaks.push({
            key: `identity:refund_payout:${refund.id}`,
            cause: 'refund',
            detail: `refund ${refund.id}'s sell order ${refund.sell_order_id}: ${why}`,
            rows: [...row, { table: 'sell_orders', id: refund.sell_order_id }],
          });
        if (order)
          expected.push({
            key: `sell_order:${order.id}:reserve`,
            kind: 'transfer',
            debit_account: held,
            credit_account: expectedAccount.reserve(refund.merchant_id, refund.is_sandbox),
            ...base,
          });
      } else if (refund.status === 'failed' || refund.status === 'canceled')
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

interface PayoutRow {
  refund_id: string | null;
  merchant_id: string;
  is_sandbox: boolean;
  status: string;
  amount_micro_pay: number;
  filled_micro_pay: number;
  target_currency: string;
  target_fiat_amount: number;
}

/** Why a refund's sell order is not the one it should be, or null when it is. */
function payoutMismatch(
  refund: {
    id: string;
    merchant_id: string;
    is_sandbox: boolean;
    status: string;
    amount_minor: number;
    currency: string;
  },
  hold: number,
  order: PayoutRow | undefined,
): string | null {
  if (!order) return 'no such sell order names this refund';
  if (order.refund_id !== refund.id) return `it names refund ${order.refund_id}`;
  if (order.merchant_id !== refund.merchant_id || order.is_sandbox !== refund.is_sandbox)
    return "it is another merchant's or mode's";
  if (Number(order.amount_micro_pay) !== hold)
    return `it sells ${order.amount_micro_pay} micro-PAY, the hold is ${hold}`;
  if (order.target_currency !== refund.currency || Number(order.target_fiat_amount) !== Number(refund.amount_minor))
    return `it asks ${order.target_fiat_amount} ${order.target_currency}, the refund is ${refund.amount_minor} ${refund.currency}`;
  if (refund.status === 'succeeded' && order.status !== 'completed')
    return `the refund succeeded but the order is ${order.status}`;
  if ((refund.status === 'failed' || refund.status === 'canceled') && order.status !== 'failed')
    return `the refund is ${refund.status} but the order is ${order.status}`;
  if (refund.status === 'canceled' && Number(order.filled_micro_pay) > 0)
    return 'the refund was canceled after buyers filled its order';
  return null;
}
