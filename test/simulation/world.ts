/**
 * The whole-flow simulation: a seeded random interleaving of every business flow against the real application (HTTP
 * through `inject`, workers run pass by pass, a manual clock), with faults injected at the ports (the receipt
 * validator times out, answers 5xx-like `unverified` or throws; the ledger refuses calls for a while; on PostgreSQL the
 * application is stopped and started again on the same database). At the end the faults heal, time runs past every
 * deadline, every worker drains, and the world is checked: ledger verify OK, reconciliation empty, no reserved
 * liquidity left, every payment, order, pending fund and dispute in a terminal or live state, and no 5xx on the way.
 * A failing seed replays exactly: `./run simulate --seed N --steps K`.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { AppError } from '../../src/lib/errors.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { createInProcessLedger } from '../../src/modules/ledger/in-process.ts';
import type { Ledger } from '../../src/modules/ledger/port.ts';
import type { ReceiptCheck, ReceiptValidator, ValidatorVerdict } from '../../src/modules/validators/port.ts';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import type { ScratchDatabase } from '../../src/db/scratch.ts';
import {
  ADMIN_HEADERS,
  INTERNAL_TOKEN,
  startTestApp,
  thbSeller,
  type TestApp,
  type TestMerchant,
} from '../helpers/app.ts';
import { openTestDatabase } from '../helpers/database.ts';
import pg from 'pg';
import { PNG } from 'pngjs';
import { PAY } from '../helpers/orders.ts';
import { seededRandom } from '../helpers/random.ts';

export interface SimulationOptions {
  seed: number;
  steps: number;
  /** Stop and start the application on the same database now and then (PostgreSQL keeps the data across it). */
  restarts?: boolean;
  /** With restarts: half of them are crashes, every connection killed by the server while a batch runs. */
  crashes?: boolean;
  log?: (line: string) => void;
}

export interface SimulationReport {
  seed: number;
  steps: number;
  /** How often each action ran, and how often it answered 2xx. */
  actions: Record<string, { runs: number; ok: number }>;
  /** Final status counts per resource kind. */
  final: Record<string, Record<string, number>>;
  faults: { validator: number; ledger: number; restarts: number };
  /**
   * What the run reached: each status transition per flow (the event the transition emits, counted from the outbox)
   * and each answer per action (`201`, `409 SELL_ORDER_BAD_STATE`, ...).
   */
  coverage: { transitions: Record<string, number>; answers: Record<string, Record<string, number>> };
  /** This seed's workload (swarm testing): each action's weight after the seed scaled or switched it off. */
  weights: Record<string, number>;
  /** Every broken invariant; empty when the seed passed. */
  problems: string[];
}

type Random = () => number;

const PAYMENT_LIVE = new Set<string>([]);
const PAYMENT_TERMINAL = new Set(['completed', 'partially_paid', 'settled', 'failed', 'expired', 'cancelled']);
const SELL_DONE = new Set(['completed', 'failed', 'cancelled']);
const BUY_DONE = new Set(['matched', 'cancelled', 'expired', 'partially_filled']);
const PENDING_FUNDS_TERMINAL = new Set(['confirmed', 'failed', 'expired']);

/**
 * A verification provider (it stands for one that checks amount, payee and reference, so its verified completes a live
 * leg) whose verdicts a seeded generator picks while faults are on; healed, it verifies every receipt.
 */
class FaultyValidator implements ReceiptValidator {
  readonly kind = 'easyslip' as const;
  faults = true;
  injected = 0;
  readonly #asked = new Map<string, number>();
  readonly #seed: number;
  constructor(seed: number) {
    this.#seed = seed;
  }

  async validate(check: ReceiptCheck): Promise<ValidatorVerdict> {
    // The verdict depends on the receipt and how often it was asked, not on the order concurrent checks arrive in.
    const digest = createHash('sha256').update(check.image).digest('hex');
    const asked = (this.#asked.get(digest) ?? 0) + 1;
    this.#asked.set(digest, asked);
    const roll = this.faults ? seededRandom(this.#seed ^ Number.parseInt(digest.slice(0, 8), 16) ^ asked)() : 0;
    if (roll < 0.72) return { outcome: 'verified', validator_kind: 'easyslip', response: { simulated: 'verified' } };
    this.injected += 1;
    if (roll < 0.84)
      return {
        outcome: 'failed',
        reason: 'amount_mismatch',
        validator_kind: 'easyslip',
        response: { simulated: 'failed' },
      };
    if (roll < 0.9) return { outcome: 'timeout', validator_kind: 'easyslip', response: { simulated: 'timeout' } };
    if (roll < 0.96) return { outcome: 'unverified', validator_kind: 'easyslip', response: { simulated: 'http_503' } };
    throw new Error('simulated validator crash');
  }
}

/** The in-process ledger behind a switch the simulation flips: while down, every call fails as an unreachable ledger. */
class FaultyLedger implements Ledger {
  readonly kind = 'in_process' as const;
  down_steps = 0;
  injected = 0;
  #inner: Ledger | undefined;

  attach(t: TestApp): void {
    this.#inner = createInProcessLedger({ db: t.db, clock: t.clock });
  }

  #ready(): Ledger {
    if (!this.#inner) throw new Error('FaultyLedger: attach() first');
    if (this.down_steps > 0) {
      this.injected += 1;
      throw new AppError('LEDGER_UNAVAILABLE', 'ledger unreachable (simulated)');
    }
    return this.#inner;
  }

  transfer: Ledger['transfer'] = (command, options) => this.#ready().transfer(command, options);
  transferAll: Ledger['transferAll'] = (commands, options) => this.#ready().transferAll(commands, options);
  transferBatch: Ledger['transferBatch'] = (commands, options) => this.#ready().transferBatch(commands, options);
  // Reads and the invariant check never fail: the simulation injects faults into moves only.
  balance: Ledger['balance'] = (account, options) => this.#inner!.balance(account, options);
  balances: Ledger['balances'] = (names, options) => this.#inner!.balances(names, options);
  creditedSince: Ledger['creditedSince'] = (account, since, options) =>
    this.#inner!.creditedSince(account, since, options);
  verify: Ledger['verify'] = () => this.#inner!.verify();
}

interface World {
  t: TestApp;
  random: Random;
  merchants: TestMerchant[];
  payments: { id: string; key: string }[];
  sells: { id: string; jwt: string; merchant_id: string }[];
  buys: { id: string; jwt: string; merchant_id: string }[];
  pending_funds: { id: string; key: string }[];
  disputes: string[];
  /** Every slip a buyer uploaded for a payment (a cheater re-uploads them). */
  slips: Buffer[];
  problems: string[];
  actions: SimulationReport['actions'];
  answers: SimulationReport['coverage']['answers'];
  final?: Record<string, Record<string, number>>;
  /** Set while a crash step kills the database's connections. */
  crashing?: boolean;
}

const pick = <T>(random: Random, items: readonly T[]): T | undefined =>
  items.length ? items[Math.floor(random() * items.length)] : undefined;
/** Mostly one of the newest items (the ones still open), sometimes any (to probe finished ones). */
const pickRecent = <T>(random: Random, items: readonly T[]): T | undefined =>
  random() < 0.8 ? pick(random, items.slice(-6)) : pick(random, items);
const between = (random: Random, low: number, high: number) => low + Math.floor(random() * (high - low + 1));

async function record(
  world: World,
  action: string,
  response: LightMyRequestResponse | undefined,
): Promise<LightMyRequestResponse | undefined> {
  const entry = (world.actions[action] ??= { runs: 0, ok: 0 });
  entry.runs += 1;
  if (!response) return undefined;
  if (response.statusCode < 300) entry.ok += 1;
  const code = response.statusCode >= 400 ? errorCode(response) : undefined;
  const answer = code ? `${response.statusCode} ${code}` : String(response.statusCode);
  const answers = (world.answers[action] ??= {});
  answers[answer] = (answers[answer] ?? 0) + 1;
  // 502/503 are the documented answers to an unreachable dependency (the injected ledger outage); 500 never is.
  if (response.statusCode === 500 || response.statusCode > 503)
    world.problems.push(`${action}: ${response.statusCode} ${response.body.slice(0, 300)}`);
  return response;
}

function errorCode(response: LightMyRequestResponse): string | undefined {
  try {
    return (response.json() as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}

/**
 * Ids of the simulation's resources now in one of `statuses`: actions aim at a state where they can succeed (most of
 * the time) as often as at one where they must be refused (the rest), so both paths are explored in-run.
 */
async function idsIn(
  world: World,
  table: 'payments' | 'sell_orders' | 'buy_orders' | 'pending_funds' | 'disputes' | 'settlements',
  statuses: readonly string[],
): Promise<string[]> {
  const rows = await world.t.db
    .selectFrom(table)
    .select('id')
    .where('status', 'in', statuses as never)
    .orderBy('id')
    .execute();
  return rows.map((row) => row.id as string);
}

/** With probability `aim`, one of `targets` known to the world; else `fallback()` (any recent one, to probe). */
async function aimed<T extends { id: string }>(
  world: World,
  items: readonly T[],
  targets: () => Promise<string[]>,
  aim = 0.75,
): Promise<T | undefined> {
  if (world.random() < aim) {
    const wanted = new Set(await targets());
    const hit = pick(
      world.random,
      items.filter((item) => wanted.has(item.id)),
    );
    if (hit) return hit;
  }
  return pickRecent(world.random, items);
}

function merchantRequest(world: World, jwt: string, method: 'GET' | 'POST', url: string, body?: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${jwt}` };
  if (method === 'POST') headers['idempotency-key'] = randomUUID();
  return world.t.request({ method, url, headers, ...(body === undefined ? {} : { payload: body as object }) });
}

async function paymentView(world: World, payment: { id: string; key: string }) {
  const response = await world.t.call('GET', `/v1/payments/${payment.id}`, payment.key);
  return response.statusCode === 200
    ? (response.json().data as { status: string; match_details?: { match_order: number }[] })
    : undefined;
}

/** Every action: a name, a weight and what it does. An action may be refused (4xx): only a 5xx is a problem. */
interface Action {
  name: string;
  weight: number;
  run: (world: World) => Promise<LightMyRequestResponse | undefined>;
}

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
        if (response.statusCode === 201)
          book(world).push({ id: response.json().data.id, jwt: merchant.jwt, merchant_id: merchant.id });
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
      const candidates = world.sells.filter((entry) => in_flight.has(entry.id));
      const roll = world.random();
      const sell =
        candidates.length > 0 && roll < 0.9
          ? pick(world.random, candidates)
          : roll < 0.85 || candidates.length > 0
            ? pickRecent(world.random, world.sells)
            : undefined;
      return (
        sell &&
        merchantRequest(world, sell.jwt, 'POST', `/v1/merchant-sell-orders/${sell.id}/confirm-cash-leg`, {
          receipt_base64: seededPng(world.random).toString('base64'),
          content_type: 'image/png',
        })
      );
    },
  },
  {
    name: 'dispute.open',
    weight: 3,
    async run(world) {
      const sell = await aimed(world, world.sells, () =>
        idsIn(world, 'sell_orders', ['cash_leg_in_flight', 'completed', 'failed']),
      );
      const response =
        sell &&
        (await merchantRequest(world, sell.jwt, 'POST', '/v1/merchant-disputes', {
          sell_order_id: sell.id,
          notes: 'simulated',
        }));
      if (response?.statusCode === 201) world.disputes.push(response.json().data.id);
      return response;
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
      const body =
        step === 'resolve'
          ? { outcome: pick(world.random, ['favor_merchant', 'favor_counterparty', 'no_action'])! }
          : {};
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
      return world.t.request({
        method: 'POST',
        url: `/admin/merchants/${merchant.id}/ledger-adjustments`,
        headers: { ...ADMIN_HEADERS, 'idempotency-key': randomUUID() },
        payload: { amount_micro_pay: between(world.random, 1, 20) * PAY, direction, reason: 'simulated adjustment' },
      });
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
];

/** A small PNG whose bytes come from the action's own generator, so a seed replays the same files. */
function seededPng(random: Random): Buffer {
  const png = new PNG({ width: 4, height: 4 });
  for (let index = 0; index < png.data.length; index += 1) png.data[index] = Math.floor(random() * 256);
  return PNG.sync.write(png);
}

/** A multipart/form-data body of several parts: files (`bytes`) and plain fields (`value`). */
function multipartParts(parts: ({ name: string; bytes: Buffer } | { name: string; value: string })[]): {
  payload: Buffer;
  headers: Record<string, string>;
} {
  const boundary = `----mpaysim${parts.length}x${Date.now().toString(36)}`;
  const chunks = parts.flatMap((part) =>
    'bytes' in part
      ? [
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="slip.png"\r\nContent-Type: image/png\r\n\r\n`,
          ),
          part.bytes,
          Buffer.from('\r\n'),
        ]
      : [Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`)],
  );
  return {
    payload: Buffer.concat([...chunks, Buffer.from(`--${boundary}--\r\n`)]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

async function runJob(world: World, name: string): Promise<number> {
  try {
    return await world.t.application.scheduler.runOnce(name);
  } catch (error) {
    // A worker pass may meet an injected ledger outage; it must leave its rows for the next pass, never corrupt them.
    if (error instanceof AppError && error.code === 'LEDGER_UNAVAILABLE') return 0;
    // A pass whose connection the server killed (a crash step) dies with it, as a killed worker would; its
    // transaction rolled back and the next pass finds the rows as they were.
    if (world.crashing) return 0;
    world.problems.push(`job ${name} threw: ${error instanceof Error ? error.message : String(error)}`);
    return 0;
  }
}

/** Runs every job until none has anything left to do (bounded). */
async function drain(world: World): Promise<void> {
  for (let round = 0; round < 20; round += 1) {
    let did = 0;
    for (const name of world.t.application.scheduler.names()) did += await runJob(world, name);
    if (did === 0) return;
  }
  world.problems.push('workers still had work after 20 rounds');
}

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
      env: { RECEIPT_VALIDATOR: 'null_validator' },
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
    // Heal, then let time pass every deadline (payment expiry, cash-leg retries, pending-funds TTL) with workers running.
    validator.faults = false;
    ledger.down_steps = 0;
    await drain(world);
    // Most sellers whose cash leg is in flight were paid and confirm it; the rest let it time out.
    const in_flight = await world.t.db
      .selectFrom('sell_orders')
      .select('id')
      .where('status', '=', 'cash_leg_in_flight')
      .orderBy('id')
      .execute();
    for (const { id } of in_flight) {
      const sell = world.sells.find((entry) => entry.id === id);
      if (!sell || random() < 0.3) continue;
      const body = { receipt_base64: seededPng(random).toString('base64'), content_type: 'image/png' };
      await record(
        world,
        'final.confirm_cash_leg',
        await merchantRequest(world, sell.jwt, 'POST', `/v1/merchant-sell-orders/${id}/confirm-cash-leg`, body),
      );
    }
    for (let day = 0; day < 6; day += 1) {
      await drain(world);
      clock.advance(24 * 3600 * 1000);
    }
    await drain(world);
    await check(world);
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
  for (const [index, rate] of rates.entries())
    await t.createSeller(
      thbSeller(between(world.random, 20_000, 120_000) * 100, rate, `08${String(12345670 + index)}`),
    );
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
