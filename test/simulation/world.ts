/**
 * The whole-flow simulation: a seeded random interleaving of every business flow against the real application (HTTP
 * through `inject`, workers run pass by pass, a manual clock), with faults injected at the ports (the receipt
 * validator times out, answers 5xx-like `unverified` or throws; the ledger refuses calls for a while; on PostgreSQL the
 * application is stopped and started again on the same database). At the end the faults heal, time runs past every
 * deadline, every worker drains, and the world is checked: ledger verify OK, reconciliation empty, no reserved
 * liquidity left, every payment, order, pending fund and dispute in a terminal or live state, and no 5xx on the way.
 * A failing seed replays exactly: `./run simulate --seed N --steps K`.
 */
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { ManualClock } from '../../src/lib/clock.ts';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import type { ScratchDatabase } from '../../src/db/scratch.ts';
import { ADMIN_HEADERS, INTERNAL_TOKEN, startTestApp, thbSeller } from '../helpers/app.ts';
import { openTestDatabase } from '../helpers/database.ts';
import { PAY } from '../helpers/orders.ts';
import { seededRandom } from '../helpers/random.ts';
import { CHEATERS, decideLeg, legsAwaitingPayee, PROOF_CHECK_HOURS } from './cheaters.ts';
import { checkConservation, fundingMicroPay } from './checks.ts';
import {
  aimed,
  between,
  confirmCashLeg,
  fillsOf,
  fillToConfirm,
  openDispute,
  truthfulOutcome,
  drain,
  FaultyLedger,
  FaultyValidator,
  idsIn,
  merchantRequest,
  multipartParts,
  paymentView,
  pick,
  pickRecent,
  record,
  runJob,
  seededPng,
  type Action,
  type SimulationReport,
  type World,
} from './kit.ts';
import { buyersAnswerAll, REFUND_ACTIONS, REFUND_DAYS } from './refunds.ts';

export type { SimulationReport } from './kit.ts';

export interface SimulationOptions {
  seed: number;
  steps: number;
  /** Stop and start the application on the same database now and then (PostgreSQL keeps the data across it). */
  restarts?: boolean;
  /** With restarts: half of them are crashes, every connection killed by the server while a batch runs. */
  crashes?: boolean;
  log?: (line: string) => void;
}

const PAYMENT_LIVE = new Set<string>([]);
/** How a connection the server killed fails a query (node-postgres and PostgreSQL's own words). */
const CONNECTION_LOST = /ECONNRESET|terminating connection|Connection terminated|connection.*(closed|ended)/i;
const PAYMENT_TERMINAL = new Set(['completed', 'partially_paid', 'settled', 'failed', 'expired', 'cancelled']);
const SELL_DONE = new Set(['completed', 'failed', 'cancelled']);
const BUY_DONE = new Set(['matched', 'cancelled', 'expired', 'partially_filled']);
const PENDING_FUNDS_TERMINAL = new Set(['confirmed', 'failed', 'expired']);

/** Create and cancel on one side of the order book: they differ only in the path, the body and where ids are kept. */
function orderActions(
  side: 'sell' | 'buy',
  path: string,
  [low_price, high_price]: [number, number],
  body: (amount_micro_pay: number, fiat_amount: number) => Record<string, unknown>,
): Action[] {
  const book = (world: World) => (side === 'sell' ? world.sells : world.buys);
  return [
    {
      name: `${side}.create`,
      weight: 5,
      async run(world) {
        let merchant = pick(world.random, world.merchants)!;
        let amount_micro_pay = between(world.random, 1, 30) * PAY;
        let fiat_amount = Math.round((amount_micro_pay / PAY) * between(world.random, low_price, high_price));
        // Most buys aim at a pending sell of another merchant, at its price or above, so that it fills in-run.
        if (side === 'buy' && world.random() < 0.7) {
          const open = await world.t.db
            .selectFrom('sell_orders')
            .select(['id', 'merchant_id', 'amount_micro_pay', 'filled_micro_pay', 'target_fiat_amount'])
            .where('status', '=', 'pending')
            .where('is_sandbox', '=', false)
            .orderBy('id')
            .execute();
          const sell = pick(world.random, open);
          const buyer =
            sell &&
            pick(
              world.random,
              world.merchants.filter((m) => m.id !== sell.merchant_id),
            );
          if (sell && buyer) {
            merchant = buyer;
            const rest = Number(sell.amount_micro_pay) - Number(sell.filled_micro_pay);
            amount_micro_pay =
              world.random() < 0.6 ? rest : Math.max(PAY, Math.floor((rest * world.random()) / PAY) * PAY);
            const price = Number(sell.target_fiat_amount) / (Number(sell.amount_micro_pay) / PAY);
            fiat_amount = Math.ceil((amount_micro_pay / PAY) * price * (1 + world.random() * 0.03));
          }
        }
        const response = await merchantRequest(world, merchant.jwt, 'POST', path, body(amount_micro_pay, fiat_amount));
        if (response.statusCode === 201) {
          const id = response.json().data.id as string;
          book(world).push({ id, jwt: merchant.jwt, merchant_id: merchant.id });
          // Some buyers never pay their sellers; some sellers never confirm, paid or not.
          if (world.random() < (side === 'buy' ? 0.2 : 0.15))
            (side === 'buy' ? world.truth.unpaying_buys : world.truth.silent_sells).add(id);
        }
        return response;
      },
    },
    {
      name: `${side}.cancel`,
      weight: 1,
      async run(world) {
        const order = await aimed(world, book(world), () =>
          idsIn(world, side === 'sell' ? 'sell_orders' : 'buy_orders', ['pending']),
        );
        return order && merchantRequest(world, order.jwt, 'POST', `${path}/${order.id}/cancel`, {});
      },
    },
  ];
}

const ACTIONS: Action[] = [
  {
    name: 'payment.create',
    weight: 16,
    async run(world) {
      const merchant = pick(world.random, world.merchants)!;
      const amount = between(world.random, 50, 4_000) * 100;
      let quote_lock_id: string | undefined;
      if (world.random() < 0.2) {
        const lock = await world.t.call('POST', '/v1/fx/quote-locks', merchant.live, { currency: 'THB' });
        if (lock.statusCode === 201) quote_lock_id = lock.json().data.id;
      }
      const body = {
        order_id: `sim-${randomUUID()}`,
        amount,
        currency: 'THB',
        return_url: 'https://shop.example/return',
        ...(quote_lock_id ? { quote_lock_id } : {}),
      };
      const response = await world.t.call('POST', '/v1/trades', merchant.live, body);
      if (response.statusCode === 201) world.payments.push({ id: response.json().data.id, key: merchant.live });
      return response;
    },
  },
  {
    name: 'payment.checkout',
    weight: 6,
    async run(world) {
      const payment = pickRecent(world.random, world.payments);
      return payment && world.t.request({ method: 'GET', url: `/checkout/${payment.id}` });
    },
  },
  {
    name: 'payment.proof',
    weight: 14,
    async run(world) {
      const payment = await aimed(world, world.payments, () =>
        idsIn(world, 'payments', ['matched', 'payment_pending', 'confirming']),
      );
      if (!payment) return undefined;
      const view = await paymentView(world, payment);
      const legs = view?.match_details?.length || 1;
      const url = `/v1/payments/${payment.id}/proof`;
      // One part per leg in one request, or one request per leg naming it, or (to probe) fewer slips than legs.
      const style = world.random();
      if (style < 0.5 || legs === 1) {
        const slips = Array.from({ length: legs }, () => seededPng(world.random));
        world.slips.push(...slips);
        const { payload, headers } = multipartParts(slips.map((bytes) => ({ name: 'proof', bytes })));
        return world.t.request({ method: 'POST', url, headers: { 'x-api-key': payment.key, ...headers }, payload });
      }
      let last: LightMyRequestResponse | undefined;
      const count = style < 0.9 ? legs : legs - 1;
      for (let leg = 1; leg <= count; leg += 1) {
        const { payload, headers } = multipartParts([
          { name: 'leg', value: String(leg) },
          { name: 'proof', bytes: seededPng(world.random) },
        ]);
        last = await world.t.request({
          method: 'POST',
          url,
          headers: { 'x-api-key': payment.key, ...headers },
          payload,
        });
      }
      return last;
    },
  },
  {
    // A cheating buyer: a slip that already paid (or was sent for) another payment, uploaded again for this one.
    name: 'cheat.reused_slip',
    weight: 2,
    async run(world) {
      const payment = await aimed(world, world.payments, () =>
        idsIn(world, 'payments', ['matched', 'payment_pending']),
      );
      const slip = pick(world.random, world.slips);
      if (!payment || !slip) return undefined;
      const view = await paymentView(world, payment);
      const legs = view?.match_details?.length || 1;
      const { payload, headers } = multipartParts(Array.from({ length: legs }, () => ({ name: 'proof', bytes: slip })));
      return world.t.request({
        method: 'POST',
        url: `/v1/payments/${payment.id}/proof`,
        headers: { 'x-api-key': payment.key, ...headers },
        payload,
      });
    },
  },
  {
    name: 'payment.cancel',
    weight: 2,
    async run(world) {
      const payment = await aimed(world, world.payments, () => idsIn(world, 'payments', ['created', 'matching']), 0.6);
      return payment && world.t.call('POST', `/v1/payments/${payment.id}/cancel`, payment.key, {});
    },
  },
  {
    name: 'clock.advance',
    weight: 6,
    async run(world) {
      world.t.clock.advance(between(world.random, 5, 240) * 1000);
      return undefined;
    },
  },
  {
    name: 'worker.pass',
    weight: 16,
    async run(world) {
      const names = world.t.application.scheduler.names();
      const name = pick(world.random, names)!;
      await runJob(world, name);
      return undefined;
    },
  },
  {
    name: 'pending_funds.create',
    weight: 4,
    async run(world) {
      const merchant = pick(world.random, world.merchants)!;
      const response = await world.t.request({
        method: 'POST',
        url: '/internal/pending-funds',
        headers: { authorization: `Bearer ${INTERNAL_TOKEN}` },
        payload: {
          receiver_merchant_id: merchant.id,
          amount_minor: between(world.random, 1, 50) * PAY,
          payer_reference: `payer-${randomUUID()}`,
          receipt_base64: seededPng(world.random).toString('base64'),
          content_type: 'image/png',
        },
      });
      if (response.statusCode === 201) world.pending_funds.push({ id: response.json().data.id, key: merchant.live });
      return response;
    },
  },
  {
    name: 'pending_funds.confirm',
    weight: 5,
    async run(world) {
      const row = await aimed(world, world.pending_funds, () =>
        idsIn(world, 'pending_funds', ['validated_pending_receiver_confirm']),
      );
      return (
        row &&
        world.t.call('POST', `/v1/pending-funds/${row.id}/receiver-confirm`, row.key, {
          receipt_base64: seededPng(world.random).toString('base64'),
          content_type: 'image/png',
        })
      );
    },
  },
  ...orderActions('sell', '/v1/merchant-sell-orders', [3_300, 3_700], (amount_micro_pay, fiat_amount) => ({
    amount_micro_pay,
    currency: 'PAY',
    target_currency: 'THB',
    target_fiat_amount: fiat_amount,
  })),
  ...orderActions('buy', '/v1/merchant-buy-orders', [3_300, 3_800], (amount_micro_pay, fiat_amount) => ({
    amount_micro_pay,
    fiat_currency: 'THB',
    fiat_amount,
  })),
  {
    name: 'sell.confirm_cash_leg',
    weight: 5,
    async run(world) {
      // Mostly an order whose cash leg is in flight (a confirm that can succeed); sometimes any order, to probe the
      // refusal; with nothing in flight, usually nothing (a confirm then can only be refused).
      let in_flight = new Set(await idsIn(world, 'sell_orders', ['cash_leg_in_flight']));
      if (in_flight.size === 0 && world.random() < 0.7) {
        // The seller waits for its cash leg to be requested: the matcher and the cash-leg worker run first.
        for (const job of ['order-matcher', 'sell-order-cash-legs']) await runJob(world, job);
        in_flight = new Set(await idsIn(world, 'sell_orders', ['cash_leg_in_flight']));
      }
      const candidates = world.sells.filter(
        (entry) => in_flight.has(entry.id) && !world.truth.silent_sells.has(entry.id),
      );
      const roll = world.random();
      const sell =
        candidates.length > 0 && roll < 0.9
          ? pick(world.random, candidates)
          : roll < 0.85 || candidates.length > 0
            ? pickRecent(world.random, world.sells)
            : undefined;
      if (!sell) return undefined;
      if (!in_flight.has(sell.id)) return confirmCashLeg(world, sell, undefined);
      // An honest seller confirms a transfer that arrived; a seller none of whose buyers paid is now and then fooled
      // into confirming one (and disputes its order later). Nothing arrived and not fooled: it waits.
      const buy_order_id = await fillToConfirm(world, sell.id);
      return buy_order_id === undefined ? undefined : confirmCashLeg(world, sell, buy_order_id);
    },
  },
  {
    name: 'dispute.open',
    weight: 3,
    async run(world) {
      const sell = await aimed(world, world.sells, () =>
        idsIn(world, 'sell_orders', ['cash_leg_in_flight', 'completed', 'failed']),
      );
      if (!sell) return undefined;
      // The seller disputes its own order, or one of its buyers does (the buyer's recourse), now and then with its slip.
      const fill = world.random() < 0.5 ? pick(world.random, await fillsOf(world, sell.id)) : undefined;
      const opener = (fill && world.buys.find((buy) => buy.id === fill.buy_order_id)) ?? sell;
      return openDispute(world, opener.jwt, sell.id, world.random() < 0.5);
    },
  },
  {
    name: 'dispute.advance',
    weight: 5,
    async run(world) {
      const open = new Set(await idsIn(world, 'disputes', ['opened', 'investigating', 'escalated']));
      const id =
        world.random() < 0.8 && open.size > 0
          ? pick(
              world.random,
              world.disputes.filter((dispute) => open.has(dispute)),
            )
          : pickRecent(world.random, world.disputes);
      if (!id) return undefined;
      const read = await world.t.request({ method: 'GET', url: `/admin/disputes/${id}`, headers: ADMIN_HEADERS });
      const status = read.statusCode === 200 ? (read.json().data.status as string) : 'opened';
      // Mostly the next allowed move; now and then one the state machine must refuse.
      const next =
        { opened: 'investigate', investigating: pick(world.random, ['escalate', 'resolve']), escalated: 'resolve' }[
          status
        ] ?? 'resolve';
      const step = world.random() < 0.85 ? next! : pick(world.random, ['investigate', 'escalate', 'resolve'])!;
      // The operator looked at the bank statement: the outcome follows what really happened.
      const body = step === 'resolve' ? { outcome: await truthfulOutcome(world, id) } : {};
      return world.t.request({
        method: 'POST',
        url: `/admin/disputes/${id}/${step}`,
        headers: ADMIN_HEADERS,
        payload: body,
      });
    },
  },
  {
    name: 'settlement.run',
    weight: 2,
    async run(world) {
      return world.t.request({ method: 'POST', url: '/admin/settlements/run', headers: ADMIN_HEADERS, payload: {} });
    },
  },
  {
    name: 'settlement.fail_or_retry',
    weight: 3,
    async run(world) {
      // An operator reports a payout that came back, or pays a failed batch out again (mostly, when one failed).
      const failed = await idsIn(world, 'settlements', ['failed']);
      const retry = world.random() < (failed.length > 0 ? 0.7 : 0.1);
      const id = pick(world.random, retry ? failed : await idsIn(world, 'settlements', ['completed']));
      if (!id) return undefined;
      return world.t.request({
        method: 'POST',
        url: `/admin/settlements/${id}/${retry ? 'retry' : 'fail'}`,
        headers: ADMIN_HEADERS,
        payload: retry ? {} : { reason: 'simulated return' },
      });
    },
  },
  {
    name: 'ledger.adjust',
    weight: 2,
    async run(world) {
      const merchant = pick(world.random, world.merchants)!;
      const direction = world.random() < 0.6 ? 'credit' : 'debit';
      const amount_micro_pay = between(world.random, 1, 20) * PAY;
      const response = await world.t.request({
        method: 'POST',
        url: `/admin/merchants/${merchant.id}/ledger-adjustments`,
        headers: { ...ADMIN_HEADERS, 'idempotency-key': randomUUID() },
        payload: { amount_micro_pay, direction, reason: 'simulated adjustment' },
      });
      if (response.statusCode === 201 || response.statusCode === 200)
        world.truth.adjusted_micro_pay += direction === 'credit' ? amount_micro_pay : -amount_micro_pay;
      return response;
    },
  },
  {
    name: 'sandbox.simulate',
    weight: 2,
    async run(world) {
      const merchant = pick(world.random, world.merchants)!;
      const scenario = pick(world.random, [
        'matched_then_completed',
        'matched_then_failed',
        'expired',
        'settlement_cycle',
        'matched_partial_fill',
      ])!;
      return world.t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, {
        scenario,
        amount: between(world.random, 10, 500) * 100,
        currency: 'THB',
      });
    },
  },
  ...CHEATERS,
  ...REFUND_ACTIONS,
];

export async function simulate(options: SimulationOptions): Promise<SimulationReport> {
  const random = seededRandom(options.seed);
  const log = options.log ?? (() => {});
  const database = await openTestDatabase();
  const clock = new ManualClock();
  const validator = new FaultyValidator(options.seed);
  const ledger = new FaultyLedger();
  // On PostgreSQL each start opens its own pool on the scratch database, as a restarted process would.
  let connection: DatabaseHandle | undefined;
  const start = async () => {
    await connection?.close();
    connection = database.url ? await openDatabase({ database_url: database.url, data_dir: 'memory://' }) : undefined;
    const handle: ScratchDatabase = connection ? { ...connection, url: database.url, close: async () => {} } : database;
    const app = await startTestApp({
      database: handle,
      clock,
      overrides: { validator, ledger },
      env: {
        RECEIPT_VALIDATOR: 'null_validator',
        PROOF_CHECK_HOURS: String(PROOF_CHECK_HOURS),
        REFUND_CLAIM_DAYS: String(REFUND_DAYS),
        REFUND_CONFIRM_DAYS: String(REFUND_DAYS),
      },
    });
    ledger.attach(app);
    return app;
  };
  const world: World = {
    t: await start(),
    random,
    merchants: [],
    payments: [],
    sells: [],
    buys: [],
    pending_funds: [],
    disputes: [],
    slips: [],
    sellers: [],
    refunds: [],
    validator,
    truth: {
      unpaying_buys: new Set(),
      silent_sells: new Set(),
      fooled_sells: new Set(),
      silent_sellers: new Set(),
      paid_refunds: new Set(),
      adjusted_micro_pay: 0,
      seller_funding_micro_pay: 0,
    },
    problems: [],
    actions: {},
    answers: {},
  };
  let restarts = 0;
  const weights = swarmWeights(options.seed);
  let transitions: Record<string, number> = {};
  try {
    await setUp(world);
    const total = ACTIONS.reduce((sum, action) => sum + (weights[action.name] ?? 0), 0);
    const choose = () => {
      let roll = random() * total;
      for (const action of ACTIONS) if ((roll -= weights[action.name] ?? 0) < 0) return action;
      return ACTIONS[ACTIONS.length - 1]!;
    };
    for (let step = 0; step < options.steps; step += 1) {
      if (validator.outage_steps > 0) validator.outage_steps -= 1;
      if (ledger.down_steps > 0) ledger.down_steps -= 1;
      else if (random() < 0.02) ledger.down_steps = between(random, 1, 4);
      const restart = options.restarts && random() < 0.02;
      // Most steps run one action; some run two to four at once, so that their transactions interleave.
      const batch = restart ? 3 : random() < 0.25 ? between(random, 2, 4) : 1;
      const chosen = Array.from({ length: batch }, choose);
      // A crash: while the batch runs, the server kills every connection of the database (as a process killed with
      // -9 loses its sessions: open transactions roll back), then the application starts again on the same data.
      const crash =
        restart && random() < 0.5 && options.crashes
          ? killConnectionsAfter(database.url, between(random, 0, 20))
          : undefined;
      world.crashing = crash !== undefined;
      await Promise.all(
        chosen.map(async (action) => {
          // Each action draws from its own generator, so concurrent actions replay the same choices whatever their order.
          const own: World = Object.assign(Object.create(world) as World, {
            random: seededRandom(Math.floor(random() * 2 ** 32)),
          });
          try {
            await record(world, action.name, await action.run(own));
          } catch (error) {
            // The simulation's own reads (what an actor looks up before it acts) die with their connection in a crash
            // step, as the workers' passes do; the application's answers are checked by record() all the same.
            if (world.crashing && error instanceof Error && CONNECTION_LOST.test(error.message)) return;
            world.problems.push(
              `${action.name} threw: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
            );
          }
        }),
      );
      if (restart) {
        await crash;
        world.crashing = false;
        await world.t.application.close();
        world.t = await start();
        restarts += 1;
        log(`step ${step}: ${crash ? 'killed every connection and restarted' : 'restarted'} the application`);
      }
    }
    // Heal, then let time pass every deadline (payment expiry, cash-leg retries, pending-funds TTL, refund claims and
    // confirmations) with workers running.
    validator.faults = false;
    validator.outage_steps = 0;
    ledger.down_steps = 0;
    await drain(world);
    await honestSellersAnswer(world);
    for (let day = 0; day < 6; day += 1) {
      await drain(world);
      await honestSellersAnswer(world);
      clock.advance(24 * 3600 * 1000);
    }
    // The recourse: the operator decides the legs a silent seller left waiting (its admin list), buyers who paid and
    // whose fills were taken back dispute, fooled sellers dispute their orders, and the operator resolves every
    // dispute; each decision as the bank statements say. Orders released by a resolution then run out.
    await operatorDecidesSilentLegs(world);
    for (let round = 0; round < 2; round += 1) {
      await settleDisputes(world);
      for (let day = 0; day < 3; day += 1) {
        await drain(world);
        await honestSellersAnswer(world);
        clock.advance(24 * 3600 * 1000);
      }
    }
    await settleDisputes(world);
    await drain(world);
    await check(world);
    await checkConservation(world);
    transitions = await reachedTransitions(world);
  } finally {
    await world.t
      .close()
      .catch((error: unknown) =>
        world.problems.push(`close: ${error instanceof Error ? error.message : String(error)}`),
      );
    if (connection) {
      await connection.close();
      await database.close();
    }
  }
  return {
    seed: options.seed,
    steps: options.steps,
    actions: world.actions,
    final: world.final ?? {},
    faults: { validator: validator.injected, ledger: ledger.injected, restarts },
    coverage: { transitions, answers: world.answers },
    weights,
    problems: world.problems,
  };
}

/**
 * Honest parties answer what waits for them: each seller confirms every transfer that arrived on its orders in flight
 * (fill by fill) and every leg waiting for it; silent ones do neither (their cash legs time out, their legs wait).
 */
async function honestSellersAnswer(world: World): Promise<void> {
  for (const id of await idsIn(world, 'sell_orders', ['cash_leg_in_flight'])) {
    const sell = world.sells.find((entry) => entry.id === id);
    if (!sell || world.truth.silent_sells.has(id)) continue;
    for (const fill of await fillsOf(world, id))
      if (!fill.confirmed && fill.paid)
        await record(world, 'final.confirm_cash_leg', await confirmCashLeg(world, sell, fill.buy_order_id));
  }
  for (const leg of await legsAwaitingPayee(world))
    if (!world.truth.silent_sellers.has(leg.seller_id))
      await record(world, 'final.seller_leg', await decideLeg(world, leg, false));
  // Refund buyers answer what waits for their word (silence would let a forged slip stand).
  await buyersAnswerAll(world, (response) => record(world, 'final.refund_answer', response));
}

/**
 * A silent seller never answers, so its legs wait (the buyer may have paid): the operator decides each from the
 * seller's statement, through `POST /admin/payments/{id}/legs/{n}/confirm` or `/reject`.
 */
async function operatorDecidesSilentLegs(world: World): Promise<void> {
  for (const leg of await legsAwaitingPayee(world))
    if (world.truth.silent_sellers.has(leg.seller_id))
      await record(world, 'final.operator_leg', await decideLeg(world, leg, true));
  await drain(world);
}

/**
 * The end of every dispute: each buyer who paid for a fill that was taken back opens one (unless one of its own or a
 * resolution for the buyers, resolved since, already answered it), each fooled seller disputes its completed order,
 * and the operator investigates and resolves every open dispute as the bank statements say (truthfulOutcome). Rounds,
 * because a sell order has one unresolved dispute at a time.
 */
async function settleDisputes(world: World): Promise<void> {
  for (let round = 0; round < 4; round += 1) {
    const resolved = await world.t.db
      .selectFrom('disputes')
      .select(['sell_order_id', 'opened_by', 'opened_by_merchant_id', 'outcome', 'resolved_at'])
      .where('status', '=', 'resolved')
      .execute();
    // A buyer's own resolved dispute, or one for every buyer (the seller's or the gateway's, resolved for them),
    // resolved once the fill was taken back: one resolved while the order was still in flight did not answer that.
    const answered = (sell_order_id: string, buyer_id: string, reversed_at: Date | null) =>
      resolved.some(
        (entry) =>
          entry.sell_order_id === sell_order_id &&
          reversed_at !== null &&
          entry.resolved_at !== null &&
          new Date(entry.resolved_at).getTime() >= reversed_at.getTime() &&
          (entry.opened_by === 'buyer'
            ? entry.opened_by_merchant_id === buyer_id
            : entry.outcome === 'favor_counterparty'),
      );
    for (const id of await idsIn(world, 'sell_orders', ['failed'])) {
      for (const fill of await fillsOf(world, id)) {
        const buy = world.buys.find((entry) => entry.id === fill.buy_order_id);
        if (buy && fill.reversed && fill.paid && !answered(id, buy.merchant_id, fill.reversed_at))
          await record(world, 'final.dispute_open', await openDispute(world, buy.jwt, id, true));
      }
    }
    for (const id of await idsIn(world, 'sell_orders', ['completed'])) {
      const sell = world.sells.find((entry) => entry.id === id);
      if (sell && world.truth.fooled_sells.has(id) && !resolved.some((entry) => entry.sell_order_id === id))
        await record(world, 'final.dispute_open', await openDispute(world, sell.jwt, id, false));
    }
    const open = await world.t.db
      .selectFrom('disputes')
      .select(['id', 'status'])
      .where('status', 'in', ['opened', 'investigating', 'escalated'])
      .orderBy('id')
      .execute();
    if (open.length === 0) return;
    for (const dispute of open) {
      if (dispute.status === 'opened')
        await record(
          world,
          'final.dispute_resolve',
          await world.t.request({
            method: 'POST',
            url: `/admin/disputes/${dispute.id}/investigate`,
            headers: ADMIN_HEADERS,
            payload: {},
          }),
        );
      await record(
        world,
        'final.dispute_resolve',
        await world.t.request({
          method: 'POST',
          url: `/admin/disputes/${dispute.id}/resolve`,
          headers: ADMIN_HEADERS,
          payload: { outcome: await truthfulOutcome(world, dispute.id) },
        }),
      );
    }
    await drain(world);
  }
}

/** Actions every workload keeps (time and the workers move every flow; without payments nothing is backed). */
const ALWAYS = new Set([
  'clock.advance',
  'worker.pass',
  'payment.create',
  'payment.proof',
  'sell.create',
  'buy.create',
]);

/**
 * Swarm testing (as TigerBeetle's VOPR varies its workload): each seed scales every action's weight by its own factor
 * (a quarter to twice) and switches some of the optional ones off, so that the fixed seeds explore different mixes
 * (a run with no cancels, one heavy on disputes) instead of four samples of the same one.
 */
export function swarmWeights(seed: number): Record<string, number> {
  const random = seededRandom(seed ^ 0x5a17);
  return Object.fromEntries(
    ACTIONS.map((action) => {
      const off = !ALWAYS.has(action.name) && random() < 0.15;
      return [action.name, off ? 0 : action.weight * (0.25 + random() * 1.75)];
    }),
  );
}

/** Each status transition the run reached, per flow: the events its transitions wrote to the outbox, by type. */
async function reachedTransitions(world: World): Promise<Record<string, number>> {
  const rows = await world.t.db
    .selectFrom('events')
    .select(['type', (eb) => eb.fn.countAll<string>().as('count')])
    .groupBy('type')
    .execute();
  return Object.fromEntries(rows.map((row) => [row.type, Number(row.count)]).sort());
}

/** Terminates every other session of the database after `delay_ms` (PostgreSQL only). */
async function killConnectionsAfter(url: string | undefined, delay_ms: number): Promise<void> {
  if (!url) return;
  await new Promise((resolve) => setTimeout(resolve, delay_ms));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
  } finally {
    await client.end();
  }
}

async function setUp(world: World): Promise<void> {
  const { t } = world;
  await t.admin('PUT', '/admin/fx/reference-prices', { base: 'PAY', quote: 'THB', price: '35.50' });
  // Sellers at several rates with little liquidity each, so that larger payments split into legs and some find none.
  const rates = ['34.90', '35.20', '35.50', '36.10'];
  for (const [index, rate] of rates.entries()) {
    const liquidity_minor = between(world.random, 20_000, 120_000) * 100;
    const seller = (await t.createSeller(thbSeller(liquidity_minor, rate, `08${String(12345670 + index)}`))) as {
      id: string;
      seller_key: string;
    };
    world.sellers.push({ id: seller.id, key: seller.seller_key });
    world.truth.seller_funding_micro_pay += fundingMicroPay(liquidity_minor, rate);
    // A seller who never answers a leg waiting for it.
    if (world.random() < 0.25) world.truth.silent_sellers.add(seller.id);
  }
  for (const name of ['Merchant A', 'Merchant B', 'Merchant C']) {
    const merchant = await t.createMerchant(name);
    world.merchants.push(merchant);
    const funded = await t.request({
      method: 'POST',
      url: `/admin/merchants/${merchant.id}/ledger-adjustments`,
      headers: { ...ADMIN_HEADERS, 'idempotency-key': randomUUID() },
      payload: { amount_micro_pay: 200 * PAY, direction: 'credit', reason: 'simulation opening balance' },
    });
    await record(world, 'setup.fund', funded);
    if (funded.statusCode < 300) world.truth.adjusted_micro_pay += 200 * PAY;
    // Sell orders are paid to the merchant's default payout destination.
    const promptpay_id = `08${String(20000000 + world.merchants.length)}`;
    await record(
      world,
      'setup.payout_destination',
      await t.request({
        method: 'PUT',
        url: '/v1/merchants/me/payout-destination',
        headers: { authorization: `Bearer ${merchant.jwt}` },
        payload: { rail: 'promptpay', promptpay_id },
      }),
    );
  }
}

async function countBy(
  world: World,
  table: 'payments' | 'sell_orders' | 'buy_orders' | 'pending_funds' | 'disputes',
): Promise<Record<string, number>> {
  const rows = await world.t.db.selectFrom(table).select(['status']).execute();
  const counts: Record<string, number> = {};
  for (const row of rows) counts[row.status as string] = (counts[row.status as string] ?? 0) + 1;
  return counts;
}

async function check(world: World): Promise<void> {
  const { t, problems } = world;
  const final: Record<string, Record<string, number>> = {};
  for (const table of ['payments', 'sell_orders', 'buy_orders', 'pending_funds', 'disputes'] as const)
    final[table] = await countBy(world, table);
  world.final = final;

  for (const [status, count] of Object.entries(final['payments']!)) {
    if (!PAYMENT_TERMINAL.has(status) && !PAYMENT_LIVE.has(status))
      problems.push(`${count} payment(s) stuck in ${status}`);
  }
  // An order whose cash leg an open dispute holds waits for the operator's resolution: held, not stuck.
  const held = await t.db
    .selectFrom('sell_orders')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('status', '=', 'cash_leg_in_flight')
    .where('held_by_dispute_id', 'is not', null)
    .executeTakeFirstOrThrow();
  for (const [status, count] of Object.entries(final['sell_orders']!)) {
    const stuck = status === 'cash_leg_in_flight' ? count - Number(held.count) : count;
    if (!SELL_DONE.has(status) && status !== 'pending' && stuck > 0)
      problems.push(`${stuck} sell order(s) stuck in ${status}`);
  }
  for (const [status, count] of Object.entries(final['buy_orders']!))
    if (!BUY_DONE.has(status) && status !== 'pending') problems.push(`${count} buy order(s) stuck in ${status}`);
  for (const [status, count] of Object.entries(final['pending_funds']!))
    if (!PENDING_FUNDS_TERMINAL.has(status)) problems.push(`${count} pending fund(s) stuck in ${status}`);

  const reserved = await t.db
    .selectFrom('sellers')
    .select(['id', 'reserved_minor'])
    .where('reserved_minor', '<>', 0 as never)
    .execute();
  for (const seller of reserved)
    problems.push(`seller ${seller.id} still has ${seller.reserved_minor} reserved with every payment finished`);

  // No slip paid for two legs: a reused slip (the cheater's) never completes a second payment leg.
  const reused = await t.db
    .selectFrom('payment_proofs')
    .innerJoin('payments', 'payments.id', 'payment_proofs.payment_id')
    .select(['payment_proofs.sha256', (eb) => eb.fn.countAll<string>().as('legs')])
    .where('payments.status', 'in', ['completed', 'settled'])
    .where('payment_proofs.verdict', '=', 'verified')
    .groupBy('payment_proofs.sha256')
    .having((eb) => eb.fn.countAll(), '>', 1)
    .execute();
  for (const slip of reused) problems.push(`slip ${slip.sha256} completed ${slip.legs} payment legs`);

  const verify = await t.admin('GET', '/admin/ledger/verify');
  if (verify.statusCode !== 200 || verify.json().data.ok !== true)
    problems.push(`ledger verify: ${verify.statusCode} ${verify.body}`);
  const supply = await t.admin('GET', '/admin/ledger/supply');
  if (supply.statusCode !== 200) problems.push(`ledger supply: ${supply.statusCode} ${supply.body}`);
  else {
    const differences = (supply.json().data.differences ?? []) as unknown[];
    for (const difference of differences) problems.push(`reconciliation: ${JSON.stringify(difference)}`);
  }
}

/**
 * The coverage table: per flow, each transition reached (the events it emitted) and each action with its answers,
 * so a run shows at a glance which paths it explored and which it never reached.
 */
export function coverageTable(report: Pick<SimulationReport, 'actions' | 'coverage'>): string {
  const flows = new Map<string, string[]>();
  const flowOf = (name: string) => name.split('.')[0]!.replace('gateway', 'dispute');
  for (const [type, count] of Object.entries(report.coverage.transitions))
    flows.set(flowOf(type), [
      ...(flows.get(flowOf(type)) ?? []),
      `    ${type.padEnd(34)} ${String(count).padStart(5)}`,
    ]);
  for (const [action, answers] of Object.entries(report.coverage.answers).sort()) {
    const { runs = 0 } = report.actions[action] ?? {};
    const detail = Object.entries(answers)
      .sort(([, a], [, b]) => b - a)
      .map(([answer, count]) => `${answer} x${count}`)
      .join(', ');
    const flow = flowOf(action.replace(/^final\./, 'sell.')).replace(/^sell$|^buy$/, (side) => `${side}_order`);
    flows.set(flow, [
      ...(flows.get(flow) ?? []),
      `    ${action.padEnd(34)} ${String(runs).padStart(5)} runs: ${detail}`,
    ]);
  }
  const lines = ['coverage (transitions reached, then actions and their answers), per flow:'];
  for (const [flow, entries] of [...flows].sort(([a], [b]) => (a < b ? -1 : 1))) lines.push(`  ${flow}`, ...entries);
  return `${lines.join('\n')}\n`;
}
