/**
 * Refunds in the simulation (DESIGN 3c): merchants refund completed and partly paid payments in full or in part, with
 * a destination of their own or a claim link the buyer answers (or never does, and the claim expires), funded by their
 * own transfer (a slip the provider checks, or the buyer confirms on the claim page; a merchant now and then sends a
 * slip it drew) or from their PAY (a hold, paid out by a sell order in the book whose payee, the buyer, confirms its
 * cash leg on the claim page when every payer paid). Several refunds of one payment race, and never add up to more
 * than it received.
 */
import { createHash } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { aimed, between, fillsOf, pick, record, seededPng, type Action, type World } from './kit.ts';

/** `REFUND_CLAIM_DAYS` and `REFUND_CONFIRM_DAYS` of the simulation's application: the final days run past both. */
export const REFUND_DAYS = 1;

const REFUNDABLE = ['completed', 'partially_paid', 'settled'];

async function refundable(world: World): Promise<{ id: string; key: string; remaining: number }[]> {
  const rows = await world.t.db
    .selectFrom('payments')
    .select(['id', 'amount_received_minor'])
    .where('status', 'in', REFUNDABLE as never)
    .where('is_sandbox', '=', false)
    .orderBy('id')
    .execute();
  const counted = await world.t.db
    .selectFrom('refunds')
    .select(['payment_id', (eb) => eb.fn.sum<string>('amount_minor').as('total')])
    .where('status', 'in', ['requires_action', 'pending', 'succeeded'])
    .groupBy('payment_id')
    .execute();
  const refunded = new Map(counted.map((row) => [row.payment_id, Number(row.total)]));
  return rows.flatMap((row) => {
    const payment = world.payments.find((entry) => entry.id === row.id);
    return payment ? [{ ...payment, remaining: Number(row.amount_received_minor) - (refunded.get(row.id) ?? 0) }] : [];
  });
}

const destination = (world: World) => ({
  rail: 'promptpay',
  promptpay_id: `08${between(world.random, 10000000, 99999999)}`,
});

function createRefund(
  world: World,
  payment: { id: string; key: string },
  body: Record<string, unknown>,
): Promise<LightMyRequestResponse> {
  return world.t
    .call('POST', `/v1/payments/${payment.id}/refunds`, payment.key, body, { 'idempotency-key': crypto.randomUUID() })
    .then((response) => {
      if (response.statusCode === 201) {
        // The merchant hands the buyer the claim link (`claim_url`), with a destination of its own too: there the
        // buyer says whether a slip nobody could check paid it.
        const refund = response.json().data as { id: string; claim_url?: string };
        const claim_token = refund.claim_url?.split('/').pop();
        world.refunds.push({
          id: refund.id,
          key: payment.key,
          payment_id: payment.id,
          ...(claim_token ? { claim_token } : {}),
        });
      }
      return response;
    });
}

/** A refund body: in full or in part, a destination or a claim link, one of the fundings. */
function refundBody(world: World, remaining: number): Record<string, unknown> {
  const partial = world.random() < 0.6 && remaining > 1;
  return {
    ...(partial ? { amount: between(world.random, 1, remaining - 1) } : {}),
    reason: pick(world.random, ['requested_by_customer', 'duplicate', 'partial_delivery', 'fraudulent']),
    ...(world.random() < 0.4 ? { destination: destination(world) } : {}),
    // PAY-funded often enough that each seed sees some of their payouts fail (unmatched, or a payer who never pays)
    funding: world.random() < 0.4 ? 'pay_balance' : 'merchant_transfer',
  };
}

async function refundIdsIn(world: World, statuses: string[], where?: 'proof' | 'awaiting_buyer'): Promise<string[]> {
  let query = world.t.db
    .selectFrom('refunds')
    .select('id')
    .where('status', 'in', statuses as never);
  if (where === 'proof')
    query = query
      .where('funding', '=', 'merchant_transfer')
      .where('destination', 'is not', null)
      .where('awaiting_buyer_since', 'is', null);
  if (where === 'awaiting_buyer') {
    // A slip no provider checked, or a payout whose payer was told to pay the buyer.
    const paying = world.t.db.selectFrom('sell_orders').select('id').where('status', '=', 'cash_leg_in_flight');
    query = query.where((eb) => eb.or([eb('awaiting_buyer_since', 'is not', null), eb('sell_order_id', 'in', paying)]));
  }
  return (await query.orderBy('id').execute()).map((row) => row.id);
}

function claimPost(world: World, token: string, form: Record<string, string>) {
  return world.t.request({
    method: 'POST',
    url: `/refunds/claim/${token}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(form).toString(),
  });
}

/**
 * The buyer's answer on the claim page: to a slip no provider could check, received if the merchant really paid; to a payout
 * in flight, received once every payer paid (else it waits, and the cash leg runs out).
 */
export async function buyerAnswers(world: World, refund: { id: string; claim_token?: string }) {
  if (!refund.claim_token) return undefined;
  const { sell_order_id } = await world.t.db
    .selectFrom('refunds')
    .select('sell_order_id')
    .where('id', '=', refund.id)
    .executeTakeFirstOrThrow();
  if (sell_order_id !== null) {
    const fills = await fillsOf(world, sell_order_id);
    return fills.length > 0 && fills.every((fill) => fill.paid)
      ? claimPost(world, refund.claim_token, { action: 'received' })
      : undefined;
  }
  const arrived = world.truth.paid_refunds.has(refund.id);
  return claimPost(world, refund.claim_token, { action: arrived ? 'received' : 'not_received' });
}

export const REFUND_ACTIONS: Action[] = [
  {
    name: 'refund.create',
    weight: 4,
    async run(world) {
      const payments = await refundable(world);
      // Mostly a payment with something left to refund; sometimes any payment (a refusal: state or amount).
      const open = payments.filter((payment) => payment.remaining > 0);
      const target = world.random() < 0.8 ? pick(world.random, open) : undefined;
      const payment = target ?? pick(world.random, world.payments.slice(-8));
      if (!payment) return undefined;
      return createRefund(world, payment, refundBody(world, target?.remaining ?? 100));
    },
  },
  {
    // Several refunds of one payment at once, each for more than half of what remains: at most one of each pair fits.
    name: 'refund.concurrent',
    weight: 2,
    async run(world) {
      const payment = pick(
        world.random,
        (await refundable(world)).filter((entry) => entry.remaining > 1),
      );
      if (!payment) return undefined;
      const share = Math.ceil((payment.remaining * between(world.random, 51, 100)) / 100);
      const bodies = Array.from({ length: between(world.random, 2, 4) }, () => ({
        ...refundBody(world, payment.remaining),
        amount: share,
      }));
      const answers = await Promise.all(bodies.map((body) => createRefund(world, payment, body)));
      // Every answer counts (each request one run): the last is the action's own.
      for (const answer of answers.slice(0, -1)) await record(world, 'refund.concurrent', answer);
      return answers.at(-1);
    },
  },
  {
    // The buyer names where its money goes on the claim page; some never come (their claim expires).
    name: 'refund.claim',
    weight: 3,
    async run(world) {
      const refund = await aimed(
        world,
        world.refunds.filter((entry) => entry.claim_token),
        () => refundIdsIn(world, ['requires_action']),
      );
      if (!refund?.claim_token) return undefined;
      const { rail, promptpay_id } = destination(world);
      return claimPost(world, refund.claim_token, { action: 'destination', rail, promptpay_id });
    },
  },
  {
    // The merchant pays the buyer and uploads the slip; a cheating merchant now and then uploads one it drew.
    name: 'refund.proof',
    weight: 4,
    async run(world) {
      const refund = await aimed(world, world.refunds, () => refundIdsIn(world, ['pending'], 'proof'));
      if (!refund) return undefined;
      const slip = seededPng(world.random);
      // The merchant paid the buyer (known before its slip is judged, as the buyer's bank knows it), or drew the slip.
      if (world.random() < 0.15) world.validator.forged.add(createHash('sha256').update(slip).digest('hex'));
      else world.truth.paid_refunds.add(refund.id);
      return world.t.call('POST', `/v1/refunds/${refund.id}/proof`, refund.key, {
        receipt_base64: slip.toString('base64'),
        content_type: 'image/png',
      });
    },
  },
  {
    name: 'refund.buyer_answer',
    weight: 3,
    async run(world) {
      const refund = await aimed(world, world.refunds, () => refundIdsIn(world, ['pending'], 'awaiting_buyer'));
      return refund && buyerAnswers(world, refund);
    },
  },
  {
    name: 'refund.cancel',
    weight: 1,
    async run(world) {
      const refund = await aimed(world, world.refunds, () => refundIdsIn(world, ['requires_action', 'pending']), 0.6);
      return refund && world.t.call('POST', `/v1/refunds/${refund.id}/cancel`, refund.key, {});
    },
  },
];

/** Before time runs out, every buyer whose refund slip waits for its word answers (silence would let a forged one stand). */
export async function buyersAnswerAll(
  world: World,
  record: (response: LightMyRequestResponse | undefined) => Promise<unknown>,
) {
  for (const id of await refundIdsIn(world, ['pending'], 'awaiting_buyer')) {
    const refund = world.refunds.find((entry) => entry.id === id);
    const answer = refund && (await buyerAnswers(world, refund));
    if (answer) await record(answer);
  }
}
