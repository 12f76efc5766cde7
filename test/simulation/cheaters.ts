/**
 * The simulation's cheaters and the honest parties they meet (DESIGN 3b): a buyer who uploads a slip it drew, a buyer
 * who tries to cash out PAY its sellers have not confirmed, a verification provider down for longer than the retry
 * budget, and the sellers whose legs then wait for them (honest ones check their bank; silent ones never answer).
 * Each is an action the random choice picks, aimed at a state where it applies.
 */
import { createHash } from 'node:crypto';
import { ADMIN_HEADERS } from '../helpers/app.ts';
import { PAY } from '../helpers/orders.ts';
import {
  aimed,
  between,
  idsIn,
  merchantRequest,
  multipartParts,
  paymentView,
  pick,
  runJob,
  seededPng,
  type Action,
  type World,
} from './kit.ts';

/** `PROOF_CHECK_HOURS` of the simulation's application: how long an unanswered check is retried. */
export const PROOF_CHECK_HOURS = 1;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A slip the buyer drew itself: the provider finds no such transfer. */
function forgedSlip(world: World): Buffer {
  const slip = seededPng(world.random);
  world.validator.forged.add(sha256(slip));
  return slip;
}

/** Legs waiting for their payee, with the slip's digest (the seller looks at its own bank account, here the truth). */
export async function legsAwaitingPayee(world: World) {
  return world.t.db
    .selectFrom('payment_proofs')
    .innerJoin('payments', 'payments.id', 'payment_proofs.payment_id')
    .innerJoin('payment_legs', (join) =>
      join
        .onRef('payment_legs.payment_id', '=', 'payment_proofs.payment_id')
        .onRef('payment_legs.match_order', '=', 'payment_proofs.match_order'),
    )
    .select([
      'payment_proofs.payment_id',
      'payment_proofs.match_order',
      'payment_proofs.sha256',
      'payment_legs.seller_id',
    ])
    .where('payment_proofs.verdict', '=', 'awaiting_payee')
    .where('payments.status', '=', 'confirming')
    .orderBy('payment_proofs.payment_id')
    .orderBy('payment_proofs.match_order')
    .execute();
}

/**
 * An honest seller's answer to a leg waiting for it: the money arrived unless the slip was forged. Through its own
 * seller key, or (now and then) the operator deciding for it.
 */
export async function decideLeg(
  world: World,
  leg: { payment_id: string; match_order: number; sha256: string; seller_id: string },
  by_operator: boolean,
) {
  const forged = world.validator.forged.has(leg.sha256);
  const decision = forged ? 'reject' : 'confirm';
  const body = forged ? { reason: 'no such transfer on my statement' } : undefined;
  if (by_operator)
    return world.t.request({
      method: 'POST',
      url: `/admin/payments/${leg.payment_id}/legs/${leg.match_order}/${decision}`,
      headers: ADMIN_HEADERS,
      ...(body ? { payload: body } : {}),
    });
  const seller = world.sellers.find((entry) => entry.id === leg.seller_id);
  return world.t.request({
    method: 'POST',
    url: `/v1/seller/legs/${leg.payment_id}/${leg.match_order}/${decision}`,
    headers: { 'x-api-key': seller?.key ?? 'sel_live_unknown' },
    ...(body ? { payload: body } : {}),
  });
}

export const CHEATERS: Action[] = [
  {
    // A buyer uploads slips it drew: every leg, or some legs with genuine slips beside (then the paid legs stand).
    name: 'cheat.forged_slip',
    weight: 3,
    async run(world) {
      const payment = await aimed(world, world.payments, () =>
        idsIn(world, 'payments', ['matched', 'payment_pending']),
      );
      if (!payment) return undefined;
      const view = await paymentView(world, payment);
      const legs = view?.match_details?.length || 1;
      const upload = (parts: Parameters<typeof multipartParts>[0]) => {
        const { payload, headers } = multipartParts(parts);
        return world.t.request({
          method: 'POST',
          url: `/v1/payments/${payment.id}/proof`,
          headers: { 'x-api-key': payment.key, ...headers },
          payload,
        });
      };
      if (legs > 1 && world.random() < 0.8) {
        // Pays the first legs, has them verified, then sends a drawn slip for the last: the payment ends partially_paid.
        for (let leg = 1; leg < legs; leg += 1)
          await upload([
            { name: 'leg', value: String(leg) },
            { name: 'proof', bytes: seededPng(world.random) },
          ]);
        for (let pass = 0; pass < 2; pass += 1) await runJob(world, 'payment-verdicts');
        return upload([
          { name: 'leg', value: String(legs) },
          { name: 'proof', bytes: forgedSlip(world) },
        ]);
      }
      const forged_leg = between(world.random, 1, legs);
      return upload(
        Array.from({ length: legs }, (_, index) => ({
          name: 'proof',
          bytes: index + 1 === forged_leg || world.random() < 0.4 ? forgedSlip(world) : seededPng(world.random),
        })),
      );
    },
  },
  {
    // A buyer whose fills its sellers have not confirmed tries to cash that PAY out at once (409), or sells only what
    // is confirmed (201).
    name: 'cheat.spend_unconfirmed',
    weight: 3,
    async run(world) {
      const unconfirmed = await world.t.db
        .selectFrom('order_fills')
        .innerJoin('buy_orders', 'buy_orders.id', 'order_fills.buy_order_id')
        .select('buy_orders.merchant_id')
        .where('order_fills.confirmed_at', 'is', null)
        .where('order_fills.reversed_at', 'is', null)
        .where('order_fills.is_sandbox', '=', false)
        .distinct()
        .orderBy('buy_orders.merchant_id')
        .execute();
      const holder =
        pick(world.random, unconfirmed) ??
        pick(
          world.random,
          world.merchants.map((m) => ({ merchant_id: m.id })),
        );
      const merchant = holder && world.merchants.find((entry) => entry.id === holder.merchant_id);
      if (!merchant) return undefined;
      const balance = await merchantRequest(world, merchant.jwt, 'GET', `/v1/merchants/${merchant.id}/balance`);
      if (balance.statusCode !== 200) return balance;
      const view = balance.json().data as { available_micro_pay: number; unconfirmed_fills_micro_pay: number };
      const cashable = view.available_micro_pay - view.unconfirmed_fills_micro_pay;
      const all_of_it = world.random() < 0.7 || cashable < PAY;
      const amount_micro_pay = all_of_it ? view.available_micro_pay : Math.floor(cashable / PAY) * PAY;
      if (amount_micro_pay < PAY) return undefined;
      const response = await merchantRequest(world, merchant.jwt, 'POST', '/v1/merchant-sell-orders', {
        amount_micro_pay,
        currency: 'PAY',
        target_currency: 'THB',
        target_fiat_amount: Math.round((amount_micro_pay / PAY) * 3_550),
      });
      if (response.statusCode === 201)
        world.sells.push({ id: response.json().data.id, jwt: merchant.jwt, merchant_id: merchant.id });
      return response;
    },
  },
  {
    // The verification provider is down for longer than the retry budget: the slips under check wait for their payee.
    name: 'provider.outage',
    weight: 1,
    async run(world) {
      world.validator.outage_steps = between(world.random, 6, 16);
      for (let pass = 0; pass < 3; pass += 1) await runJob(world, 'payment-verdicts');
      world.t.clock.advance(PROOF_CHECK_HOURS * 3600_000 + between(world.random, 1, 20) * 60_000);
      for (let pass = 0; pass < 3; pass += 1) await runJob(world, 'payment-verdicts');
      return undefined;
    },
  },
  {
    // A seller looks at the legs waiting for it and confirms those that arrived, rejects the forged; a silent seller
    // never answers (its legs wait: the buyer paid). Now and then the operator decides for a seller.
    name: 'seller.decide_leg',
    weight: 4,
    async run(world) {
      const waiting = await legsAwaitingPayee(world);
      const leg = pick(
        world.random,
        waiting.filter((entry) => !world.truth.silent_sellers.has(entry.seller_id)),
      );
      if (!leg) {
        // Nothing waits: a seller lists its legs (an empty page), or probes a decision on a leg not waiting (404/409).
        const seller = pick(world.random, world.sellers);
        return (
          seller &&
          world.t.request({
            method: 'GET',
            url: '/v1/seller/legs?status=awaiting_payee',
            headers: { 'x-api-key': seller.key },
          })
        );
      }
      return decideLeg(world, leg, world.random() < 0.2);
    },
  },
];
