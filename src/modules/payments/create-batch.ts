import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Executor, Trx } from '../../db/database.ts';
import { isDatabaseTooSlow } from '../../db/resilience.ts';
import { preparedQuery } from '../../db/prepared.ts';
import { idempotent, keyClaimRows } from '../../http/idempotency.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { ok } from '../../http/schemas.ts';
import { GroupCommit, type GroupCommitOptions } from '../../lib/group-commit.ts';
import { fiatMinorToMicroPay, type Currency, type PaymentMethod } from '../../lib/money.ts';
import { eventRows, type NewEvent } from '../events/outbox.ts';
import {
  AllocationRaced,
  allocateSynthetic,
  OPTIMISTIC_ALLOCATION_ATTEMPTS,
  OFFER_PAGE,
  OfferBook,
  type OfferPageRow,
  raceLost,
  type HeldLeg,
  type Leg,
} from '../liquidity/service.ts';
import { duplicateOrderId, quoteLocksUnavailable } from './errors.ts';
import { paymentEventFields, presentPayment, type PaymentView } from './present.ts';
import type { BatchedCreate, CreateAnswer, PaymentsDeps } from './deps.ts';
import {
  type CreatePaymentInput,
  DEFAULT_EXPIRES_IN_SECONDS,
  newPaymentRow,
  resolvePaymentMethod,
  toMinor,
} from './new-payment.ts';
import { paymentIdByOrderId } from './stats.ts';
import type { LegRow, PaymentRow } from './tables.ts';

/** A request's outcome in its batch: its answer, its own error, or ALONE (it runs alone after the batch). */
type Outcome = { answer: CreateAnswer } | { error: unknown } | typeof ALONE;

/** One create inside a batch. */
interface Item {
  job: BatchedCreate;
  id: string;
  amount_minor: number;
  payment_method: PaymentMethod;
  row: PaymentRow;
  /** A quote lock's rate (a trade under a lock, created alone). */
  rate_override?: string;
  legs?: Leg[];
  /** The payment as the API shows it (set once its legs are planned). */
  view?: PaymentView;
  /** `{"success":true,"data":<view>}`, serialized once: the response, the stored idempotent response and the event reuse it. */
  body_json?: string;
  /** The view's JSON inside `body_json`. */
  view_json?: string;
  error?: unknown;
}

export interface CreateBatcherOptions {
  /** The most creates one batch takes. */
  max_batch?: number;
  /** How long an idle batcher waits for more creates before it starts a batch. */
  gather_ms?: number;
  /** Told when a whole batch failed for a reason other than a refusal (its requests then ran alone). */
  onBatchFailed?: (error: unknown) => void;
}

/** What the batcher did so far (the bench prints the mean batch size). */
export interface CreateBatcherStats {
  batches: number;
  /** Requests answered by a batch. */
  batched: number;
  /** Requests that ran alone (a used idempotency key, or a refused or failed batch). */
  alone: number;
  /** Batches whose call refused (a key or an order_id in use, an offer taken meanwhile): their requests ran alone. */
  refused: number;
  failed_batches: number;
  /** Batches planned from the offers the call of the batch before them answered (no offers read of their own). */
  planned_from_answer: number;
  /** Milliseconds, summed over the batches that called: from a batch's start to its call, and the call itself. */
  plan_ms: number;
  call_ms: number;
}

/**
 * The per-process batching allocator, group-commit style: creates that arrive while a batch plans (or within
 * `gather_ms` of an idle moment) are allocated together, FIFO in arrival order. A batch reads the offers, plans, and
 * writes everything in one call (`mpay_create_batch`): the idempotency keys with their responses, the payments, legs
 * and `payment.matched` events, and one conditional reservation per seller as the last write (so a seller's row is
 * locked only for that reservation and the commit). The next batch gathers while this one writes. Each
 * request gets its own answer: bad input or too little liquidity fails that request alone, the others commit.
 *
 * The failure rule: a batch whose call refuses (a key or an order_id in use, an offer taken meanwhile) or fails runs
 * each of its requests alone, in arrival order: `alone`, a batch of one through the same call inside the request's
 * idempotent transaction, where a key in use replays or conflicts, an order_id in use is 409, and a lost race for an
 * offer plans again (the last attempt with the offers locked). A database too slow to answer (a timeout) fails the
 * whole batch with 503 instead, and every batch of requests that arrived before that failure too: each would wait out
 * the same timeout in turn.
 */
export class PaymentCreateBatcher {
  readonly #deps: PaymentsDeps;
  /** The last batch the database was too slow for: when, and with what. */
  #too_slow: { at_ms: number; error: unknown } | null = null;
  readonly #arrived_ms = new WeakMap<BatchedCreate, number>();
  /**
   * The offers the last call answered (its books as its reservation left them) and when: a batch whose first request
   * arrived before that answer plans from them instead of reading the offers (they are at least as fresh as a read it
   * would have made beside that call), so a batch under load is one round trip. A batch that starts on an idle
   * allocator reads them.
   */
  #answered: { pages: OfferPages | undefined; at_ms: number } | undefined;
  /** Settles when the batch started last has answered its call (or failed). */
  #call_done: Promise<void> = Promise.resolve();
  readonly #group: GroupCommit<BatchedCreate, Outcome>;
  readonly #group_options: GroupCommitOptions<BatchedCreate, Outcome>;
  readonly stats: CreateBatcherStats = {
    batches: 0,
    batched: 0,
    alone: 0,
    refused: 0,
    failed_batches: 0,
    planned_from_answer: 0,
    plan_ms: 0,
    call_ms: 0,
  };

  constructor(deps: PaymentsDeps, options: CreateBatcherOptions = {}) {
    this.#deps = deps;
    const onBatchFailed = options.onBatchFailed ?? (() => {});
    this.#group_options = {
      // one batch at a time: the next one gathers everything that arrives while this one writes, then plans from the
      // offers this call answers (it could not plan earlier). What a batch costs beside its creates is about half of a
      // create's CPU at 11 creates a batch (bench batch_cost), so larger batches are the cheaper ones: about 18 a
      // batch at 32 connections, against about 11 with a second batch cut early to wait beside the first. The next
      // batch is cut and called before this one's answers are presented and sent, so the database works on it meanwhile
      max_in_flight: 1,
      next_before_answers: true,
      max_batch: options.max_batch ?? 128,
      gather_ms: options.gather_ms ?? 1,
      alone: async (job) => {
        this.stats.alone++;
        return { answer: await job.alone() };
      },
      refusesEveryItem: (error) => {
        if (!isDatabaseTooSlow(error)) return false;
        if (this.#too_slow?.error !== error) this.#too_slow = { at_ms: performance.now(), error };
        return true;
      },
      onBatchFailed: (error) => {
        if (refusalOf(error) !== undefined) this.stats.refused++;
        else {
          this.stats.failed_batches++;
          onBatchFailed(error);
        }
      },
    };
    this.#group = new GroupCommit((jobs, previous) => this.#batch(jobs, previous), this.#group_options);
  }

  /** The most creates one batch takes from now on (the bench caps it to measure what a batch costs beside a create). */
  get max_batch(): number {
    return this.#group_options.max_batch;
  }
  set max_batch(value: number) {
    this.#group_options.max_batch = Math.max(1, Math.floor(value));
  }

  /** Every create runs alone while set (the bench measures both ways in one run). */
  bypass = false;

  /** Creates one payment in the next batch; resolves to its own answer or rejects with its own error. */
  async create(job: BatchedCreate): Promise<CreateAnswer> {
    if (this.bypass) return job.alone();
    this.#arrived_ms.set(job, performance.now());
    const outcome = await this.#group.submit(job);
    if (outcome === ALONE) {
      // a keyed request that failed in planning may be a replay: it runs alone, after its batch
      this.stats.alone++;
      return job.alone();
    }
    if ('error' in outcome) throw outcome.error;
    return outcome.answer;
  }

  /**
   * Plans the batch, waits until the one before it is done (batches write one at a time, in arrival order), then
   * writes; throws when the call refuses or fails.
   */
  async #batch(jobs: BatchedCreate[], previous: Promise<void>): Promise<Outcome[]> {
    const first_arrived_ms = Math.min(...jobs.map((job) => this.#arrived_ms.get(job) ?? performance.now()));
    const started_ms = performance.now();
    const before = this.#call_done;
    let called!: () => void;
    this.#call_done = new Promise<void>((resolve) => (called = resolve));
    try {
      await before;
      const answered = this.#answered;
      const pages = answered && first_arrived_ms <= answered.at_ms ? answered.pages : undefined;
      if (pages) this.stats.planned_from_answer++;
      const planned = await this.#plan(jobs, pages);
      await previous;
      // requests that were already waiting when the database was last too slow get that answer now
      const too_slow = this.#too_slow;
      if (too_slow && too_slow.at_ms >= first_arrived_ms) throw too_slow.error;
      if (planned.write) {
        const calling_ms = performance.now();
        this.stats.plan_ms += calling_ms - started_ms;
        const [result] = await createBatch(this.#deps.db, ...planned.write).catch((error: unknown) => {
          this.#answered = undefined;
          throw error;
        });
        this.#answered = { pages: offerPages(result?.done), at_ms: performance.now() };
        this.stats.call_ms += this.#answered.at_ms - calling_ms;
      }
      called();
      this.stats.batches++;
      return planned.items.map((item): Outcome => {
        if (item.error === ALONE) return ALONE;
        this.stats.batched++;
        return item.error !== undefined
          ? { error: item.error }
          : { answer: { status: 201, body: ok(item.view!), json: item.body_json! } };
      });
    } finally {
      called();
    }
  }

  /**
   * The batch's call, planned from a plain read of the offers (FIFO over it as below). The call's text is fixed and
   * its rows are jsonb parameters, so PostgreSQL runs it as a prepared statement. Throws when the read fails.
   */
  async #plan(jobs: readonly BatchedCreate[], pages: OfferPages | undefined): Promise<PlannedBatch> {
    const now = this.#deps.clock.now();
    const items = prepare(jobs);
    // The call checks one credential epoch, the newest a request's cached credential was read under: a request
    // cached under an older one runs alone (authenticated again) instead of refusing the whole batch.
    let credential_epoch: number | null = null;
    for (const job of jobs)
      if (job.credential_epoch !== undefined && (credential_epoch === null || job.credential_epoch > credential_epoch))
        credential_epoch = job.credential_epoch;
    if (credential_epoch !== null)
      for (const item of items)
        if (item.job.credential_epoch !== undefined && item.job.credential_epoch !== credential_epoch)
          item.error = ALONE;
    for (const item of live(items)) item.row = paymentRow(item, now);
    await planAll(this.#deps.db, items, false, pages);
    // a request with a key gets its error only once its key is known unused (it may be a replay)
    for (const item of items) if (item.job.idempotency && item.error !== undefined) item.error = ALONE;
    const created = live(items);
    if (!created.length) {
      // no call checks the epoch: a request whose credential came from the cache gets its error alone, authenticated
      for (const item of items) if (item.job.credential_epoch !== undefined) item.error = ALONE;
      return { items };
    }
    for (const item of created) present(item, this.#deps.public_base_url);
    return { items, write: writeParameters(created, now, true, credential_epoch, OFFER_PAGE) };
  }
}

/** A batch planned for its one round trip: each request's outcome, and its call's parameters (none when every request failed). */
interface PlannedBatch {
  items: Item[];
  write?: CreateBatchParameters;
}

/** The first page of each live book a call drew from, by `OfferBook` name (`false/<currency>/<rail>`). */
type OfferPages = Map<string, OfferPageRow[]>;

/** The pages the call answered (null when it was asked for none). */
function offerPages(done: unknown): OfferPages | undefined {
  if (!Array.isArray(done)) return undefined;
  const pages: OfferPages = new Map();
  for (const book of done as { currency: string; payment_method: string; offers: OfferPageRow[] }[])
    pages.set(
      bookName({ is_sandbox: false, currency: book.currency, payment_method: book.payment_method }),
      book.offers,
    );
  return pages;
}

const bookName = (key: { is_sandbox: boolean; currency: string; payment_method: string }) =>
  `${key.is_sandbox}/${key.currency}/${key.payment_method}`;

type CreateBatchParameters = [
  credential_epoch: number | null,
  claims: string | null,
  payments: string,
  legs: string,
  events: string,
  seller_ids: string[],
  held_minor: number[],
  offer_page: number,
];

/**
 * Every payment create's writes in one call (`mpay_create_batch`), a named prepared statement on PostgreSQL. The call
 * wakes the dispatchers itself when its events queued a delivery to send (its NOTIFY is delivered when it commits), so
 * a batch is one round trip and a batch whose merchants subscribe to nothing wakes nobody. (A NOTIFY makes its commit
 * wait for the other notifying commits, which costs nothing here: the batches of a process commit one after another
 * anyway.) The commit watch learns that it writes the outbox and needs no other wake-up.
 */
const createBatch = preparedQuery<{ done: unknown }, CreateBatchParameters>(
  (db) =>
    db.selectNoFrom([
      sql`mpay_create_batch(${0}::bigint, ${''}::jsonb, ${''}::jsonb, ${''}::jsonb, ${''}::jsonb, ${[]}::uuid[], ${[]}::bigint[], ${0}::integer)`.as(
        'done',
      ),
    ]),
  { writes: ['idempotency_keys', 'payments', 'payment_legs', 'events', 'sellers'], notifies: true },
);

/** The view as the API shows it, serialized once for every place it goes. */
function present(item: Item, public_base_url: string): void {
  item.view = presentPayment(item.row, legRows(item), public_base_url);
  item.view_json = JSON.stringify(item.view);
  item.body_json = `{"success":true,"data":${item.view_json}}`;
}

/** `object` as JSON with one more field, `key`, whose value is JSON already (so it is not serialized again). */
function withJsonField(object: object, key: string, json: string): string {
  const head = JSON.stringify(object);
  return `${head.length > 2 ? `${head.slice(0, -1)},` : '{'}${JSON.stringify(key)}:${json}}`;
}

/**
 * The call's parameters for `created` (planned, presented); `with_keys`: the requests' keys go in with their responses;
 * `credential_epoch`: the epoch the call must still see (null: nothing to check); `offer_page`: how many offers of
 * each book the call answers (0: none). The stored responses and the events take each view's JSON as it is.
 */
function writeParameters(
  created: readonly Item[],
  now: Date,
  with_keys: boolean,
  credential_epoch: number | null,
  offer_page: number,
): CreateBatchParameters {
  const keyed = with_keys ? created.filter((item) => item.job.idempotency) : [];
  const claims = keyClaimRows(
    keyed.map((item) => ({ ...item.job.idempotency!, status: 201, body: undefined })),
    now,
  ).map((claim, index) => withJsonField(claim, 'response_body', keyed[index]!.body_json!));
  const events = eventRows(now, created.map(matchedEvent)).rows.map(({ payload, ...row }, index) => {
    const { data: _view, ...envelope } = payload;
    return withJsonField(row, 'payload', withJsonField(envelope, 'data', created[index]!.view_json!));
  });
  const holds = heldPerSeller(created);
  return [
    credential_epoch,
    claims.length ? `[${claims.join(',')}]` : null,
    JSON.stringify(created.map((item) => item.row)),
    JSON.stringify(created.flatMap(legRows)),
    `[${events.join(',')}]`,
    holds.map((hold) => hold.seller_id),
    holds.map((hold) => hold.allocated_fiat_amount),
    offer_page,
  ];
}

/** The reason of a call that mpay_refuse stopped (`refused: <reason>`), or undefined for any other error. */
function refusalOf(error: unknown): string | undefined {
  return error instanceof Error ? /^refused: (.+)$/.exec(error.message)?.[1] : undefined;
}

/**
 * A create on its own: a batch of one through the same call, inside the request's idempotent transaction when `http`
 * is given (a key in use replays or conflicts there), with a quote lock consumed in that transaction. A lost race for an offer plans
 * again from a fresh read, the last attempt with the offers locked; an order_id in use is 409.
 */
export function createAlone(
  deps: PaymentsDeps,
  scope: MerchantScope,
  input: CreatePaymentInput,
  http?: { request: FastifyRequest; reply: FastifyReply },
): () => Promise<CreateAnswer> {
  const run = (trx: Trx, lock_offers: boolean) => createOne(deps, trx, scope, input, lock_offers);
  return async () => {
    try {
      const body = await withAllocationRetry((lock_offers) =>
        http
          ? idempotent(deps, http.request, http.reply, { required: false }, async (trx) => ({
              status: 201,
              body: ok(await run(trx, lock_offers)),
            }))
          : deps.db.transaction().execute(async (trx) => ok(await run(trx, lock_offers))),
      );
      return http ? { body } : { status: 201, body };
    } catch (error) {
      if (refusalOf(error) === 'an order_id in use')
        throw duplicateOrderId(input.order_id, (await paymentIdByOrderId(deps.db, scope, input.order_id)) ?? undefined);
      throw error;
    }
  };
}

async function createOne(
  deps: PaymentsDeps,
  trx: Trx,
  scope: MerchantScope,
  input: CreatePaymentInput,
  lock_offers: boolean,
): Promise<PaymentView> {
  const now = deps.clock.now();
  const [item] = prepare([
    { scope, input, idempotency: undefined, alone: () => Promise.reject(new Error('alone already')) },
  ]);
  if (item!.error !== undefined) throw item!.error;
  if (input.quote_lock_id !== undefined) {
    if (!deps.quote_locks) throw quoteLocksUnavailable();
    const lock = await deps.quote_locks.consume(
      trx,
      scope,
      input.quote_lock_id,
      { currency: input.currency, payment_id: item!.id },
      now,
    );
    item!.rate_override = lock.rate;
  }
  item!.row = paymentRow(item!, now);
  await planAll(trx, [item!], lock_offers);
  if (item!.error !== undefined) throw item!.error;
  present(item!, deps.public_base_url);
  try {
    await createBatch(trx, ...writeParameters([item!], now, false, null, 0));
  } catch (error) {
    throw refusalOf(error) === 'an offer taken' ? new AllocationRaced() : error;
  }
  return item!.view!;
}

/**
 * Runs a create (its whole transaction) again when its reservation lost a race for an offer, re-planning from fresh
 * offers each time; after OPTIMISTIC_ALLOCATION_ATTEMPTS losses the last attempt plans with the offers locked, so it
 * cannot lose again.
 */
async function withAllocationRetry<T>(create: (lock_offers: boolean) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await create(attempt > OPTIMISTIC_ALLOCATION_ATTEMPTS);
    } catch (error) {
      if (!(error instanceof AllocationRaced) || attempt > OPTIMISTIC_ALLOCATION_ATTEMPTS) throw raceLost(error);
    }
  }
}

/** Marks a request that goes the single way after the batch (its idempotency key was used already). */
const ALONE = Symbol('alone');

const live = (items: readonly Item[]) => items.filter((item) => item.error === undefined);

/** Each request's payment id and amount, or its own error (a bad amount or rail), in arrival order. */
function prepare(jobs: readonly BatchedCreate[]): Item[] {
  return jobs.map((job) => {
    const item = { job, id: job.scope.is_sandbox ? `sbx_${randomUUID()}` : randomUUID() } as Item;
    try {
      item.amount_minor = toMinor(job.input.amount, job.input.currency);
      item.payment_method = resolvePaymentMethod(job.input.currency, job.input.payment_method);
    } catch (error) {
      item.error = error;
    }
    return item;
  });
}

/**
 * Plans the live items' legs FIFO in arrival order over one offer book per currency and rail (live: read a page at a
 * time, as far as the batch needs) or one read of the synthetic sellers (sandbox); too little liquidity fails that
 * item alone.
 */
async function planAll(
  executor: Executor,
  items: readonly Item[],
  lock_offers: boolean,
  pages?: OfferPages,
): Promise<void> {
  const books = new Map<string, OfferBook>();
  const sandbox = new Map<string, Leg>();
  for (const item of live(items)) {
    const key = {
      is_sandbox: item.job.scope.is_sandbox,
      currency: item.job.input.currency,
      payment_method: item.payment_method,
    };
    const name = bookName(key);
    try {
      if (key.is_sandbox && item.rate_override !== undefined) {
        item.legs = await allocateSynthetic(executor, key, [item.amount_minor], { rate_override: item.rate_override });
        continue;
      }
      if (key.is_sandbox) {
        // the synthetic seller is the same for every part: read once per currency and rail
        let synthetic = sandbox.get(name);
        if (!synthetic) sandbox.set(name, (synthetic = (await allocateSynthetic(executor, key, [1]))[0]!));
        item.legs = [
          {
            ...synthetic,
            allocated_fiat_amount: item.amount_minor,
            amount_micro_pay: fiatMinorToMicroPay(item.amount_minor, key.currency, synthetic.rate),
          },
        ];
        continue;
      }
      let book = books.get(name);
      if (!book) books.set(name, (book = new OfferBook(executor, key, lock_offers, pages?.get(name))));
      item.legs = await book.plan(item.amount_minor, item.rate_override);
    } catch (error) {
      item.error = error;
    }
  }
}

/** What the created live payments hold of each seller: one reservation per seller, not per payment. */
function heldPerSeller(created: readonly Item[]): HeldLeg[] {
  const per_seller = new Map<string, number>();
  for (const item of created) {
    if (item.job.scope.is_sandbox) continue;
    for (const leg of item.legs!)
      per_seller.set(
        leg.seller_id,
        (per_seller.get(leg.seller_id) ?? 0) + (leg.reserved_minor ?? leg.allocated_fiat_amount),
      );
  }
  return [...per_seller].map(([seller_id, held]) => ({ seller_id, allocated_fiat_amount: held, reserved_minor: null }));
}

function matchedEvent(item: Item): NewEvent {
  const view = item.view!;
  return {
    merchant_id: item.row.merchant_id,
    is_sandbox: item.row.is_sandbox,
    type: 'payment.matched',
    resource_type: 'payment',
    resource_id: item.id,
    data: view as unknown as Record<string, unknown>,
    flat: paymentEventFields(view),
  };
}

function paymentRow(item: Item, now: Date): PaymentRow {
  const { scope, input } = item.job;
  return newPaymentRow({
    id: item.id,
    scope,
    order_id: input.order_id,
    amount_minor: item.amount_minor,
    currency: input.currency as Currency,
    payment_method: item.payment_method,
    return_url: input.return_url,
    metadata: input.metadata ?? {},
    quote_lock_id: input.quote_lock_id ?? null,
    payment_link_id: input.payment_link_id ?? null,
    expires_at: new Date(now.getTime() + (input.expires_in_seconds ?? DEFAULT_EXPIRES_IN_SECONDS) * 1000),
    created_at: now,
    matched_at: now,
  });
}

function legRows(item: Item): LegRow[] {
  return (item.legs ?? []).map((leg) => ({ payment_id: item.id, ...leg }));
}

/**
 * Creates a payment for another module (the payment-links page): through the process's batching allocator when it
 * has one, else alone; no idempotency key (each call is a new payment). Answers the payment as the API shows it.
 */
export async function createPayment(
  deps: PaymentsDeps,
  scope: MerchantScope,
  input: CreatePaymentInput,
): Promise<PaymentView> {
  const alone = createAlone(deps, scope, input);
  const answer = deps.create_batcher
    ? await deps.create_batcher.create({ scope, input, idempotency: undefined, alone })
    : await alone();
  return answer.body.data;
}
