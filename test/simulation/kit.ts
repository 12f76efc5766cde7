/**
 * What the whole-flow simulation's actors share: the world they act on, the faulty ports, and the helpers that aim an
 * action at a state and record its answer.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { AppError } from '../../src/lib/errors.ts';
import { createInProcessLedger } from '../../src/modules/ledger/in-process.ts';
import type { Ledger } from '../../src/modules/ledger/port.ts';
import type { ReceiptCheck, ReceiptValidator, ValidatorVerdict } from '../../src/modules/validators/port.ts';
import type { TestApp, TestMerchant } from '../helpers/app.ts';
import { PNG } from 'pngjs';
import { seededRandom } from '../helpers/random.ts';

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

export type Random = () => number;

/**
 * A verification provider (it stands for one that checks amount, payee and reference, so its verified completes a live
 * leg) whose verdicts a seeded generator picks while faults are on; healed, it verifies every receipt.
 */
export class FaultyValidator implements ReceiptValidator {
  readonly kind = 'easyslip' as const;
  faults = true;
  injected = 0;
  /** Steps left of an outage: every check answers timeout or 503 (`unverified`), faults or not. */
  outage_steps = 0;
  /** SHA-256 of the slips a cheater drew: the provider finds no such transfer at the bank. */
  readonly forged = new Set<string>();
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
    if (this.outage_steps > 0) {
      this.injected += 1;
      return asked % 2
        ? { outcome: 'timeout', validator_kind: 'easyslip', response: { simulated: 'outage_timeout' } }
        : { outcome: 'unverified', validator_kind: 'easyslip', response: { simulated: 'outage_503' } };
    }
    if (this.forged.has(digest))
      return {
        outcome: 'failed',
        reason: 'slip_not_found',
        validator_kind: 'easyslip',
        response: { simulated: 'forged' },
      };
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
export class FaultyLedger implements Ledger {
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

export interface World {
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
  /** The liquidity sellers and their seller keys (they confirm or reject the legs that wait for them). */
  sellers: { id: string; key: string }[];
  refunds: { id: string; key: string; payment_id: string; claim_token?: string }[];
  validator: FaultyValidator;
  truth: Truth;
  problems: string[];
  actions: SimulationReport['actions'];
  answers: SimulationReport['coverage']['answers'];
  final?: Record<string, Record<string, number>>;
  /** Set while a crash step kills the database's connections. */
  crashing?: boolean;
}

/**
 * What happened off the platform, known to the simulation alone: who paid whom, who lies. The end checks judge the
 * platform's records against it (no honest party lost money; supply equals value paid for).
 */
export interface Truth {
  /** Buy orders whose buyer never pays its sellers (it hopes to keep or spend the fill's PAY). */
  unpaying_buys: Set<string>;
  /** Sell orders whose seller never confirms its cash leg, paid or not. */
  silent_sells: Set<string>;
  /** Sell orders whose seller confirmed a transfer that never came (it then disputes its own order). */
  fooled_sells: Set<string>;
  /** Liquidity sellers who never confirm nor reject a leg waiting for them. */
  silent_sellers: Set<string>;
  /** Net PAY the operator's audited adjustments minted (+) or burned (-), per mode `live`, as answered 2xx. */
  adjusted_micro_pay: number;
  /** Refunds whose merchant really paid the buyer (it sent a slip of a real transfer). */
  paid_refunds: Set<string>;
  /** What the live sellers' funding is worth at their rates (the mint each funding must make). */
  seller_funding_micro_pay: number;
}

export const pick = <T>(random: Random, items: readonly T[]): T | undefined =>
  items.length ? items[Math.floor(random() * items.length)] : undefined;
/** Mostly one of the newest items (the ones still open), sometimes any (to probe finished ones). */
export const pickRecent = <T>(random: Random, items: readonly T[]): T | undefined =>
  random() < 0.8 ? pick(random, items.slice(-6)) : pick(random, items);
export const between = (random: Random, low: number, high: number) => low + Math.floor(random() * (high - low + 1));

export async function record(
  world: World,
  action: string,
  response: LightMyRequestResponse | undefined,
): Promise<LightMyRequestResponse | undefined> {
  const entry = (world.actions[action] ??= { runs: 0, ok: 0 });
  entry.runs += 1;
  if (!response) return undefined;
  // 303 is a form post's success (the claim page answers it and shows the result).
  if (response.statusCode < 300 || response.statusCode === 303) entry.ok += 1;
  const code = response.statusCode >= 400 ? errorCode(response) : undefined;
  const answer = code ? `${response.statusCode} ${code}` : String(response.statusCode);
  const answers = (world.answers[action] ??= {});
  answers[answer] = (answers[answer] ?? 0) + 1;
  // 502/503 are the documented answers to an unreachable dependency (the injected ledger outage); 500 never is.
  if (response.statusCode === 500 || response.statusCode > 503)
    world.problems.push(`${action}: ${response.statusCode} ${response.body.slice(0, 300)}`);
  return response;
}

export function errorCode(response: LightMyRequestResponse): string | undefined {
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
export async function idsIn(
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
export async function aimed<T extends { id: string }>(
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

export function merchantRequest(world: World, jwt: string, method: 'GET' | 'POST', url: string, body?: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${jwt}` };
  if (method === 'POST') headers['idempotency-key'] = randomUUID();
  return world.t.request({ method, url, headers, ...(body === undefined ? {} : { payload: body as object }) });
}

export async function paymentView(world: World, payment: { id: string; key: string }) {
  const response = await world.t.call('GET', `/v1/payments/${payment.id}`, payment.key);
  return response.statusCode === 200
    ? (response.json().data as { status: string; match_details?: { match_order: number }[] })
    : undefined;
}

/** Every action: a name, a weight and what it does. An action may be refused (4xx): only a 5xx is a problem. */
export interface Action {
  name: string;
  weight: number;
  run: (world: World) => Promise<LightMyRequestResponse | undefined>;
}

/** A small PNG whose bytes come from the action's own generator, so a seed replays the same files. */
export function seededPng(random: Random): Buffer {
  const png = new PNG({ width: 4, height: 4 });
  for (let index = 0; index < png.data.length; index += 1) png.data[index] = Math.floor(random() * 256);
  return PNG.sync.write(png);
}

/** A multipart/form-data body of several parts: files (`bytes`) and plain fields (`value`). */
export function multipartParts(parts: ({ name: string; bytes: Buffer } | { name: string; value: string })[]): {
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

export async function runJob(world: World, name: string): Promise<number> {
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
export async function drain(world: World): Promise<void> {
  for (let round = 0; round < 20; round += 1) {
    let did = 0;
    for (const name of world.t.application.scheduler.names()) did += await runJob(world, name);
    if (did === 0) return;
  }
  world.problems.push('workers still had work after 20 rounds');
}

export interface FillRow {
  id: string;
  sell_order_id: string;
  buy_order_id: string;
  buyer_id: string;
  amount_micro_pay: number;
  reversed: boolean;
  /** When the fill was taken back (a resolution before that did not answer it). */
  reversed_at: Date | null;
  confirmed: boolean;
  /** Did its buyer pay the seller (the truth)? */
  paid: boolean;
}

/**
 * The fills its buyers paid. A buyer pays all its fills of one sell order or none (a buyer's dispute concerns its
 * fills of the order together), as its first buy order there says.
 */
export function paidFills(
  world: World,
  fills: readonly { id: string; sell_order_id: string; buy_order_id: string; buyer_id: string }[],
): Set<string> {
  const first = new Map<string, string>();
  for (const fill of [...fills].sort((a, b) => (a.buy_order_id < b.buy_order_id ? -1 : 1))) {
    const key = `${fill.sell_order_id}/${fill.buyer_id}`;
    if (!first.has(key)) first.set(key, fill.buy_order_id);
  }
  return new Set(
    fills
      .filter((fill) => !world.truth.unpaying_buys.has(first.get(`${fill.sell_order_id}/${fill.buyer_id}`)!))
      .map((fill) => fill.id),
  );
}

/** The fills of a sell order, oldest first. */
export async function fillsOf(world: World, sell_order_id: string): Promise<FillRow[]> {
  const rows = await world.t.db
    .selectFrom('order_fills')
    .innerJoin('buy_orders', 'buy_orders.id', 'order_fills.buy_order_id')
    .select([
      'order_fills.id',
      'order_fills.sell_order_id',
      'order_fills.buy_order_id',
      'buy_orders.merchant_id as buyer_id',
      'order_fills.amount_micro_pay',
      'order_fills.reversed_at',
      'order_fills.confirmed_at',
    ])
    .where('order_fills.sell_order_id', '=', sell_order_id)
    .orderBy('order_fills.id')
    .execute();
  const paid = paidFills(world, rows);
  return rows.map((row) => ({
    id: row.id,
    sell_order_id: row.sell_order_id,
    buy_order_id: row.buy_order_id,
    buyer_id: row.buyer_id,
    amount_micro_pay: Number(row.amount_micro_pay),
    reversed: row.reversed_at !== null,
    reversed_at: row.reversed_at === null ? null : new Date(row.reversed_at),
    confirmed: row.confirmed_at !== null,
    paid: paid.has(row.id),
  }));
}

/**
 * The fill an honest seller confirms on an order in flight: one not yet confirmed whose buyer paid; on an order of one
 * fill never paid, now and then that one anyway (the seller is fooled, and will dispute it). Undefined: nothing to
 * confirm.
 */
export async function fillToConfirm(world: World, sell_order_id: string): Promise<string | undefined> {
  const fills = (await fillsOf(world, sell_order_id)).filter((fill) => !fill.confirmed);
  const arrived = pick(
    world.random,
    fills.filter((fill) => fill.paid),
  );
  if (arrived) return arrived.buy_order_id;
  const all = await fillsOf(world, sell_order_id);
  // Only an order of one fill: confirming it completes the order, which the seller's dispute can then take back.
  if (fills.length === 1 && all.length === 1 && !fills[0]!.paid && world.random() < 0.15) {
    world.truth.fooled_sells.add(sell_order_id);
    return fills[0]!.buy_order_id;
  }
  return undefined;
}

export function confirmCashLeg(
  world: World,
  sell: { id: string; jwt: string },
  buy_order_id: string | undefined,
): Promise<LightMyRequestResponse> {
  return merchantRequest(world, sell.jwt, 'POST', `/v1/merchant-sell-orders/${sell.id}/confirm-cash-leg`, {
    receipt_base64: seededPng(world.random).toString('base64'),
    content_type: 'image/png',
    ...(buy_order_id ? { buy_order_id } : {}),
  });
}

export async function openDispute(
  world: World,
  jwt: string,
  sell_order_id: string,
  evidence: boolean,
): Promise<LightMyRequestResponse> {
  const response = await merchantRequest(world, jwt, 'POST', '/v1/merchant-disputes', {
    sell_order_id,
    notes: 'simulated',
    ...(evidence ? { evidence_base64: seededPng(world.random).toString('base64'), content_type: 'image/png' } : {}),
  });
  if (response.statusCode === 201) world.disputes.push(response.json().data.id);
  return response;
}

/**
 * The outcome an operator who saw the bank statements gives a dispute (DESIGN 3b: the resolution answers whether the
 * buyers paid the seller). In flight: every buyer paid, favor_counterparty; none, favor_merchant; some, no_action (the
 * seller confirms the paid ones). Completed: the disputed fills (a buyer's own, or all) unpaid, favor_merchant, else a
 * resolution that moves nothing. Failed: the disputed fills taken back were all paid, favor_counterparty; none,
 * favor_merchant or no_action; some, no_action (each paid buyer's own dispute gives it back).
 */
export async function truthfulOutcome(world: World, dispute_id: string): Promise<string> {
  const dispute = await world.t.db
    .selectFrom('disputes')
    .innerJoin('sell_orders', 'sell_orders.id', 'disputes.sell_order_id')
    .select(['disputes.sell_order_id', 'disputes.opened_by', 'disputes.opened_by_merchant_id', 'sell_orders.status'])
    .where('disputes.id', '=', dispute_id)
    .executeTakeFirst();
  if (!dispute) return 'no_action';
  const fills = await fillsOf(world, dispute.sell_order_id);
  const nothing = () =>
    pick(world.random, ['no_action', dispute.status === 'failed' ? 'favor_merchant' : 'favor_counterparty'])!;
  if (dispute.status === 'cash_leg_in_flight' || dispute.status === 'matched') {
    if (fills.every((fill) => fill.paid)) return 'favor_counterparty';
    return fills.every((fill) => !fill.paid) ? 'favor_merchant' : 'no_action';
  }
  const buyers =
    dispute.opened_by === 'buyer'
      ? new Set(world.buys.filter((buy) => buy.merchant_id === dispute.opened_by_merchant_id).map((buy) => buy.id))
      : undefined;
  const disputed = fills.filter((fill) => !buyers || buyers.has(fill.buy_order_id));
  if (dispute.status === 'completed')
    return disputed.length > 0 && disputed.every((fill) => !fill.paid) ? 'favor_merchant' : nothing();
  if (dispute.status === 'failed') {
    const taken = disputed.filter((fill) => fill.reversed);
    if (taken.length > 0 && taken.every((fill) => fill.paid)) return 'favor_counterparty';
    return taken.every((fill) => !fill.paid) ? nothing() : 'no_action';
  }
  return 'no_action';
}
