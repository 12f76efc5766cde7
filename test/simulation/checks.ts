/**
 * The simulation's end checks on value, computed from the journal's rows and the business rows with the simulation's
 * own arithmetic and its knowledge of what happened off the platform (the truth), never by the code that posts:
 * - supply equals value paid for, cause by cause: live sellers' funding at their rates, the operator's adjustments as
 *   answered, receiver-confirmed pending funds, and per sell order the fills' mints answered by the seller's burns or
 *   their reversals, less only the shortfalls still owed; nothing minted or burned by a dispute or anything else;
 * - no honest party lost money: a buyer who paid holds its fill's PAY (a buyer who did not holds nothing of it); a
 *   seller who was paid gave up that PAY and nothing more;
 * - refunds: never more than received per payment, `amount_refunded` their succeeded sum, merchant_transfer refunds
 *   move no PAY, a refund hold holds what its open pay_balance refunds hold, and no refund succeeds on a slip its
 *   buyer never got; no payment leg completes on a forged slip.
 */
import { paidFills, type World } from './kit.ts';

interface Posting {
  key: string;
  kind: string;
  debit_account: string;
  credit_account: string;
  amount: number;
}

const live = (account: string) => account.startsWith('live:');
const isIssuance = (account: string) => /^live:issuance:/.test(account);
const available = (merchant_id: string) => `live:merchant:${merchant_id}:available`;
const reserve = (merchant_id: string) => `live:merchant:${merchant_id}:reserve`;

/** Fiat minor units (2 decimals) at `rate` (fiat per PAY), in micro-PAY rounded down: a seller's funding. */
export function fundingMicroPay(liquidity_minor: number, rate: string): number {
  const [whole = '0', fraction = ''] = rate.split('.');
  const scaled = BigInt(`${whole}${fraction}`);
  return Number((BigInt(liquidity_minor) * 1_000_000n * 10n ** BigInt(fraction.length)) / (scaled * 100n));
}

export async function checkConservation(world: World): Promise<void> {
  const { db } = world.t;
  const problems = world.problems;
  const journal: Posting[] = (
    await db
      .selectFrom('ledger_transfers')
      .select(['key', 'kind', 'debit_account', 'credit_account', 'amount_micro_pay'])
      .execute()
  )
    .map((row) => ({ ...row, amount: Number(row.amount_micro_pay) }))
    .filter((row) => live(row.debit_account));
  const shortfalls = (await db.selectFrom('pay_shortfalls').selectAll().execute()).filter((row) =>
    live(row.debtor_account),
  );
  const shortfall_of = new Map(shortfalls.map((row) => [row.id, row]));
  const collections = await db.selectFrom('pay_shortfall_collections').selectAll().execute();
  /** The key a posting answers: a shortfall's collection answers the key its shortfall was recorded under. */
  const originOf = new Map<string, string>();
  for (const collection of collections) {
    const shortfall = shortfall_of.get(collection.shortfall_id);
    if (shortfall) originOf.set(collection.key, shortfall.origin_key);
  }
  const outstanding = (row: { amount_micro_pay: number; collected_micro_pay: number }) =>
    Number(row.amount_micro_pay) - Number(row.collected_micro_pay);

  // Supply, cause by cause.
  const orders = await db.selectFrom('sell_orders').selectAll().where('is_sandbox', '=', false).execute();
  const fills = await db
    .selectFrom('order_fills')
    .innerJoin('buy_orders', 'buy_orders.id', 'order_fills.buy_order_id')
    .select([
      'order_fills.id',
      'order_fills.sell_order_id',
      'order_fills.buy_order_id',
      'order_fills.amount_micro_pay',
      'buy_orders.merchant_id as buyer_id',
    ])
    .where('order_fills.is_sandbox', '=', false)
    .execute();
  const paid_fills = paidFills(world, fills);
  const paid = (fill: { id: string }) => paid_fills.has(fill.id);
  const disputes = await db.selectFrom('disputes').select(['id', 'sell_order_id', 'status']).execute();
  /** Which sell order each order-book key belongs to. */
  const order_of_key = new Map<string, string>();
  const fill_of_key = new Map<string, (typeof fills)[number]>();
  for (const order of orders) order_of_key.set(order.id, order.id);
  for (const fill of fills) {
    for (const key of [
      `buy_order:${fill.buy_order_id}:fill:${fill.sell_order_id}`,
      `buy_order:${fill.buy_order_id}:fill:${fill.sell_order_id}:reversal`,
    ]) {
      order_of_key.set(key, fill.sell_order_id);
      fill_of_key.set(key, fill);
    }
    for (const dispute of disputes.filter((entry) => entry.sell_order_id === fill.sell_order_id)) {
      const key = `dispute:${dispute.id}:fill:${fill.id}`;
      order_of_key.set(key, fill.sell_order_id);
      fill_of_key.set(key, fill);
    }
  }
  const orderOf = (key: string): string | undefined => {
    const origin = originOf.get(key) ?? key;
    return order_of_key.get(origin) ?? /^sell_order:([0-9a-f-]{36}):/.exec(origin)?.[1];
  };
  const pending_fund_ids = new Set(
    (
      await db
        .selectFrom('pending_funds')
        .select(['id', 'amount_minor'])
        .where('status', '=', 'confirmed')
        .where('is_sandbox', '=', false)
        .execute()
    ).map((row) => row.id),
  );
  const confirmed_funds = await db
    .selectFrom('pending_funds')
    .select((eb) => eb.fn.sum<string>('amount_minor').as('total'))
    .where('status', '=', 'confirmed')
    .where('is_sandbox', '=', false)
    .executeTakeFirstOrThrow();
  const supply: Record<string, number> = {};
  const order_net = new Map<string, number>();
  for (const row of journal) {
    if (row.kind === 'transfer') continue;
    const sign = row.kind === 'mint' ? 1 : -1;
    const issuance = row.kind === 'mint' ? row.debit_account : row.credit_account;
    const order = orderOf(row.key);
    const cause = /^seller:[^:]+:funding(:|$)/.test(row.key)
      ? 'seller_funding'
      : order !== undefined
        ? 'order_book'
        : issuance === 'live:issuance:adjustments'
          ? 'adjustment'
          : pending_fund_ids.has(row.key) && issuance === 'live:issuance:world'
            ? 'pending_funds'
            : `other (${issuance})`;
    supply[cause] = (supply[cause] ?? 0) + sign * row.amount;
    if (order !== undefined) order_net.set(order, (order_net.get(order) ?? 0) + sign * row.amount);
  }
  const owed_to_issuance = new Map<string, number>();
  for (const shortfall of shortfalls) {
    const order = orderOf(shortfall.origin_key);
    if (order !== undefined && isIssuance(shortfall.creditor_account))
      owed_to_issuance.set(order, (owed_to_issuance.get(order) ?? 0) + outstanding(shortfall));
  }
  // An order still open (pending with fills, matched, in flight) has its fills' PAY out, unanswered as yet; an ended
  // one only what its buyers still owe after a reversal.
  const inCirculation = (order: (typeof orders)[number]) =>
    ['completed', 'failed', 'cancelled'].includes(order.status)
      ? (owed_to_issuance.get(order.id) ?? 0)
      : fills
          .filter((fill) => fill.sell_order_id === order.id)
          .reduce((sum, fill) => sum + Number(fill.amount_micro_pay), 0);
  const want: Record<string, number> = {
    seller_funding: world.truth.seller_funding_micro_pay,
    adjustment: world.truth.adjusted_micro_pay,
    pending_funds: Number(confirmed_funds.total ?? 0),
    order_book: orders.reduce((sum, order) => sum + inCirculation(order), 0),
  };
  for (const cause of new Set([...Object.keys(want), ...Object.keys(supply)]))
    if ((supply[cause] ?? 0) !== (want[cause] ?? 0))
      problems.push(
        `supply: the journal's live ${cause} is ${supply[cause] ?? 0} micro-PAY net; the value paid for is ${want[cause] ?? 0}`,
      );
  for (const order of orders) {
    const net = order_net.get(order.id) ?? 0;
    const owed = inCirculation(order);
    if (net !== owed)
      problems.push(
        `supply: sell order ${order.id} (${order.status}) leaves ${net} micro-PAY of its fills in circulation; ${owed} may be`,
      );
  }

  // No honest party lost money. Orders whose dispute is unresolved, or still in flight, are not decided yet.
  const undecided = new Set(
    disputes.filter((entry) => entry.status !== 'resolved').map((entry) => entry.sell_order_id),
  );
  const decided = orders.filter(
    (order) => (order.status === 'completed' || order.status === 'failed') && !undecided.has(order.id),
  );
  /** What `account` got (+) or gave (-) under the keys of one fill or order, its debts still owed counted as given. */
  const heldBy = (accounts: string[], belongs: (key: string) => boolean) => {
    let held = 0;
    for (const row of journal) {
      if (!belongs(originOf.get(row.key) ?? row.key)) continue;
      const from = accounts.includes(row.debit_account);
      const to = accounts.includes(row.credit_account);
      if (to && !from) held += row.amount;
      if (from && !to) held -= row.amount;
    }
    for (const shortfall of shortfalls) {
      if (!belongs(shortfall.origin_key)) continue;
      if (accounts.includes(shortfall.debtor_account)) held -= outstanding(shortfall);
      if (accounts.includes(shortfall.creditor_account)) held += outstanding(shortfall);
    }
    return held;
  };
  for (const order of decided) {
    const own = fills.filter((fill) => fill.sell_order_id === order.id);
    for (const fill of own) {
      const held = heldBy([available(fill.buyer_id)], (key) => fill_of_key.get(key)?.id === fill.id);
      const should = paid(fill) ? Number(fill.amount_micro_pay) : 0;
      if (held !== should)
        problems.push(
          `${paid(fill) ? 'a buyer who paid' : 'a buyer who never paid'} holds ${held} micro-PAY of fill ${fill.id} (sell order ${order.id}, ${order.status}); it should hold ${should}`,
        );
    }
    if (world.truth.silent_sells.has(order.id)) continue;
    const gave = -heldBy(
      [available(order.merchant_id), reserve(order.merchant_id), `live:merchant:${order.merchant_id}:refund_hold`],
      (key) => orderOf(key) === order.id,
    );
    const was_paid = own.filter((fill) => paid(fill)).reduce((sum, fill) => sum + Number(fill.amount_micro_pay), 0);
    if (gave !== was_paid)
      problems.push(
        `the seller of sell order ${order.id} (${order.status}) was paid for ${was_paid} micro-PAY and gave up ${gave}`,
      );
  }

  // Refunds.
  const payments = await db
    .selectFrom('payments')
    .select(['id', 'status', 'amount_received_minor', 'amount_refunded_minor'])
    .where('id', 'in', [
      ...new Set(world.refunds.map((refund) => refund.payment_id)),
      '00000000-0000-0000-0000-000000000000',
    ])
    .execute();
  const refunds = await db.selectFrom('refunds').selectAll().execute();
  for (const payment of payments) {
    const own = refunds.filter((refund) => refund.payment_id === payment.id);
    const counted = own
      .filter((refund) => refund.status !== 'failed' && refund.status !== 'canceled')
      .reduce((sum, refund) => sum + Number(refund.amount_minor), 0);
    const succeeded = own
      .filter((refund) => refund.status === 'succeeded')
      .reduce((sum, refund) => sum + Number(refund.amount_minor), 0);
    if (counted > Number(payment.amount_received_minor))
      problems.push(`payment ${payment.id} received ${payment.amount_received_minor} and has ${counted} in refunds`);
    if (succeeded !== Number(payment.amount_refunded_minor))
      problems.push(
        `payment ${payment.id} shows ${payment.amount_refunded_minor} refunded; its refunds that succeeded add up to ${succeeded}`,
      );
  }
  const refund_keys = journal.filter((row) =>
    refunds.some((refund) => refund.funding === 'merchant_transfer' && row.key.includes(refund.id)),
  );
  for (const row of refund_keys) problems.push(`a merchant_transfer refund moved PAY: ${row.key}`);
  const holds = new Map<string, number>();
  for (const refund of refunds)
    if (
      refund.funding === 'pay_balance' &&
      !refund.is_sandbox &&
      (refund.status === 'requires_action' || refund.status === 'pending') &&
      refund.sell_order_id === null
    )
      holds.set(refund.merchant_id, (holds.get(refund.merchant_id) ?? 0) + Number(refund.hold_micro_pay));
  for (const merchant of world.merchants) {
    const account = `live:merchant:${merchant.id}:refund_hold`;
    const balance = journal.reduce(
      (sum, row) =>
        sum + (row.credit_account === account ? row.amount : 0) - (row.debit_account === account ? row.amount : 0),
      0,
    );
    if (balance !== (holds.get(merchant.id) ?? 0))
      problems.push(
        `${account} holds ${balance} micro-PAY; its open pay_balance refunds hold ${holds.get(merchant.id) ?? 0}`,
      );
  }
  for (const refund of refunds)
    if (
      refund.status === 'succeeded' &&
      refund.funding === 'merchant_transfer' &&
      !world.truth.paid_refunds.has(refund.id)
    )
      problems.push(`refund ${refund.id} succeeded on slips the merchant drew: its buyer never got the money`);

  // No payment leg completed on a forged slip.
  const forged_legs = (
    await db
      .selectFrom('payment_proofs')
      .select(['payment_id', 'match_order', 'sha256'])
      .where('verdict', '=', 'verified')
      .execute()
  ).filter((proof) => world.validator.forged.has(proof.sha256));
  for (const leg of forged_legs)
    problems.push(`leg ${leg.match_order} of payment ${leg.payment_id} was verified on a forged slip`);
}
