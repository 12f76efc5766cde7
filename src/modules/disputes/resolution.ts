import type { Executor, Trx } from '../../db/database.ts';
import { fillsWithBuyers } from '../buy-orders/service.ts';
import { accounts, type Ledger } from '../ledger/port.ts';
import { takeUpTo } from '../ledger/shortfalls.ts';
import { completeDisputedCashLeg, failDisputedCashLeg } from '../sell-orders/disputed.ts';
import type { SellOrderRow } from '../sell-orders/tables.ts';
import type { DisputeOutcome, DisputeRow, LedgerEffect } from './tables.ts';

/**
 * What a resolution does (docs/disputes.md): it answers whether the buyers paid the seller, and PAY follows the fiat.
 * It never mints or burns on one side, so the supply after it is the supply before the match:
 * - cash leg completed, `favor_merchant` (the seller was not paid after all): each disputed fill's PAY goes from its
 *   buyer back to the seller;
 * - cash leg failed, `favor_counterparty` (the buyers did pay): each paid fill's PAY goes from the seller back to its
 *   buyer (the fill had been taken back from the buyer when the cash leg failed);
 * - cash leg in flight: `favor_counterparty` completes it as a confirmed cash leg, `favor_merchant` fails it as a
 *   failed cash leg;
 * - anything else moves nothing. A side that already spent the PAY owes the rest as a shortfall (ledger/shortfalls.ts).
 * A dispute opened by a buyer concerns that buyer's fills only; one opened by the seller or the gateway, every fill.
 */

/** Ledger key of one fill's move by a resolution. */
export const disputeMoveKey = (dispute_id: string, fill_id: string) => `dispute:${dispute_id}:fill:${fill_id}`;

/** Effects that moved PAY between the parties: a fill they moved is never moved again by a later dispute. */
export const MOVING_EFFECTS: readonly LedgerEffect[] = ['return_to_seller', 'return_to_buyers', 'mint', 'burn'];

type Disputed = Pick<DisputeRow, 'id' | 'opened_by' | 'opened_by_merchant_id'>;

/** The fills a dispute concerns: the opening buyer's, or all of them. */
async function disputedFills(executor: Executor, dispute: Disputed, sell_order_id: string) {
  const fills = await fillsWithBuyers(executor, sell_order_id);
  return dispute.opened_by === 'buyer'
    ? fills.filter((fill) => fill.buyer_merchant_id === dispute.opened_by_merchant_id)
    : fills;
}

/**
 * The fills earlier resolutions of the order already moved between the parties (each fill moves at most once: the
 * buyers of one order each dispute their own fills), or `all` when one made before resolutions followed the fiat
 * minted or burned for the whole order.
 */
export async function fillsMovedEarlier(
  executor: Executor,
  sell_order_id: string,
  dispute_id: string,
): Promise<ReadonlySet<string> | 'all'> {
  const earlier = await executor
    .selectFrom('disputes')
    .select(['id', 'opened_by', 'opened_by_merchant_id', 'ledger_effect'])
    .where('sell_order_id', '=', sell_order_id)
    .where('id', '<>', dispute_id)
    .where('ledger_effect', 'in', [...MOVING_EFFECTS])
    .execute();
  if (earlier.some((dispute) => dispute.ledger_effect === 'mint' || dispute.ledger_effect === 'burn')) return 'all';
  const moved = new Set<string>();
  for (const dispute of earlier)
    for (const fill of await disputedFills(executor, dispute, sell_order_id))
      if (dispute.ledger_effect === 'return_to_buyers' ? fill.reversed_at !== null : fill.reversed_at === null)
        moved.add(fill.id);
  return moved;
}

/** The moves of a `return_to_seller` or `return_to_buyers` effect, each at its fill's whole PAY. */
async function movesOf(
  executor: Executor,
  dispute: Disputed,
  order: Pick<SellOrderRow, 'id' | 'merchant_id' | 'is_sandbox'>,
  effect: 'return_to_seller' | 'return_to_buyers',
) {
  const seller = accounts.merchantAvailable(order.merchant_id, order.is_sandbox);
  // Back to the seller: the fills its buyers still hold (none was taken back, the order completed). Back to the
  // buyers: the fills taken back when the cash leg failed.
  const fills = (await disputedFills(executor, dispute, order.id)).filter((fill) =>
    effect === 'return_to_seller' ? fill.reversed_at === null : fill.reversed_at !== null,
  );
  return fills.map((fill) => {
    const buyer = accounts.merchantAvailable(fill.buyer_merchant_id, order.is_sandbox);
    return {
      fill_id: fill.id,
      key: disputeMoveKey(dispute.id, fill.id),
      debit_account: effect === 'return_to_seller' ? buyer : seller,
      credit_account: effect === 'return_to_seller' ? seller : buyer,
      amount_micro_pay: Number(fill.amount_micro_pay),
      buy_order_id: fill.buy_order_id,
    };
  });
}

export interface ResolutionEffect {
  effect: LedgerEffect;
  /** PAY the resolution concerned (moved plus owed); null when it moved nothing. */
  amount_micro_pay: number | null;
  /** The first posting it made, if any. */
  transfer_id: string | null;
  /** Per move: what was taken and what is owed as a shortfall. */
  moves: { fill_id: string; key: string; taken_micro_pay: number; shortfall_micro_pay: number }[];
}

const NOTHING: ResolutionEffect = { effect: 'none', amount_micro_pay: null, transfer_id: null, moves: [] };

/** Applies a resolution to the (locked) sell order in the resolving transaction. */
export async function applyResolution(
  ledger: Ledger,
  trx: Trx,
  dispute: Disputed,
  order: SellOrderRow,
  outcome: DisputeOutcome,
  moved_earlier: ReadonlySet<string> | 'all',
  now: Date,
): Promise<ResolutionEffect> {
  if (order.status === 'cash_leg_in_flight') {
    const buyers =
      dispute.opened_by === 'buyer'
        ? new Set((await disputedFills(trx, dispute, order.id)).map((fill) => fill.buy_order_id))
        : null;
    if (outcome === 'favor_counterparty') {
      await completeDisputedCashLeg(ledger, trx, order, buyers, now);
      return { ...NOTHING, effect: 'complete_cash_leg', amount_micro_pay: order.filled_micro_pay };
    }
    if (outcome === 'favor_merchant') {
      await failDisputedCashLeg(ledger, trx, order, now);
      return { ...NOTHING, effect: 'fail_cash_leg', amount_micro_pay: order.filled_micro_pay };
    }
    return NOTHING;
  }
  if (moved_earlier === 'all') return NOTHING;
  // A refund's payout completed on its buyer's own word that the money arrived (the payee vouched): nothing goes back
  // to the refunding merchant, whose refund has succeeded.
  const effect =
    order.status === 'completed' && outcome === 'favor_merchant' && order.refund_id === null
      ? 'return_to_seller'
      : order.status === 'failed' && order.filled_micro_pay > 0 && outcome === 'favor_counterparty'
        ? 'return_to_buyers'
        : null;
  if (!effect) return NOTHING;
  const moves = (await movesOf(trx, dispute, order, effect)).filter((move) => !moved_earlier.has(move.fill_id));
  if (moves.length === 0) return NOTHING;
  const result: ResolutionEffect = { effect, amount_micro_pay: 0, transfer_id: null, moves: [] };
  for (const move of moves) {
    const taken = await takeUpTo(
      ledger,
      trx,
      {
        key: move.key,
        kind: 'transfer',
        debit_account: move.debit_account,
        credit_account: move.credit_account,
        amount_micro_pay: move.amount_micro_pay,
        memo: `dispute ${dispute.id} resolved: fill ${move.fill_id} ${effect === 'return_to_seller' ? 'back to its seller' : 'back to its buyer'}`,
      },
      now,
    );
    result.amount_micro_pay = (result.amount_micro_pay ?? 0) + move.amount_micro_pay;
    result.transfer_id ??= taken.transfer?.id ?? null;
    result.moves.push({
      fill_id: move.fill_id,
      key: move.key,
      taken_micro_pay: taken.taken_micro_pay,
      shortfall_micro_pay: taken.shortfall_micro_pay,
    });
  }
  return result;
}
