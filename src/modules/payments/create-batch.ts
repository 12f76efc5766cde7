import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Executor, Trx } from '../../db/database.ts';
import { preparedQuery } from '../../db/prepared.ts';
import { claimIdempotencyKeys, keyClaimRows, settleIdempotencyKeys, type KeyIdentity } from '../../http/idempotency.ts';
import type { MerchantScope } from '../../http/principal.ts';
import { ok } from '../../http/schemas.ts';
import { fiatMinorToMicroPay, type Currency, type PaymentMethod } from '../../lib/money.ts';
import { eventRows, recordEvents, type NewEvent } from '../events/outbox.ts';
import { AllocationRaced, allocateSynthetic, OPTIMISTIC_ALLOCATION_ATTEMPTS, OfferBook, reserveLegs, type HeldLeg, type Leg } from '../liquidity/service.ts';
import { paymentEventFields, presentPayment, type PaymentView } from './present.ts';
import { DEFAULT_EXPIRES_IN_SECONDS, newPaymentRow, resolvePaymentMethod, toMinor, type CreatePaymentInput, type PaymentsDeps } from './service.ts';
import { duplicateOrderId } from './errors.ts';
import type { LegRow, PaymentRow } from './tables.ts';

/** What a create answers: the body the route sends, and its status when the batch made it (alone() sets its own on the reply). */
export interface CreateAnswer {
  status?: number;
  body: { success: true; data: PaymentView };
}

export interface BatchedCreate {
  scope: MerchantScope;
  input: CreatePaymentInput;
  /** The request's idempotency identity when it carries a key (see idempotencyRequest). */
  idempotency: { identity: KeyIdentity; fingerprint: string } | undefined;
  /**
   * The request on its own (the unbatched create with its own idempotency handling): run for a request whose key
   * was already used (replay or conflict), and for every request of a batch that failed for a reason of its own.
   */
  alone: () => Promise<CreateAnswer>;
}

interface Pending extends BatchedCreate {
  resolve: (answer: CreateAnswer) => void;
  reject: (error: unknown) => void;
}

/** One create inside a batch attempt. */
interface Item {
  job: Pending;
  id: string;
  amount_minor: number;
  payment_method: PaymentMethod;
  row: PaymentRow;
  claim_id?: number;
  legs?: Leg[];
  /** The payment as the API shows it (set once its legs are planned). */
  view?: PaymentView;
  error?: unknown;
}

export interface CreateBatcherOptions {
  /** The most creates one transaction takes. */
  max_batch?: number;
  /** How long an idle batcher waits for more creates before it starts a batch. */
  gather_ms?: number;
  /** Told when a whole batch failed (its requests then ran alone). */
  onBatchFailed?: (error: unknown) => void;
  /** Called after a batch's one round trip committed events (CommitWatch sees only the transactional way's inserts). */
  onEventsCommitted?: () => void;
}

/** What the batcher did so far (the bench prints the mean batch size). */
export interface CreateBatcherStats {
  batches: number;
  /** Requests answered by a batch. */
  batched: number;
  /** Requests that ran alone (a used idempotency key, or a failed batch). */
  alone: number;
  failed_batches: number;
  /** Batches whose one round trip refused (or failed), which then ran the transactional way. */
  transactional: number;
}

/**
 * The per-process batching allocator, group-commit style: creates that arrive while a batch plans (or
 * within `gather_ms` of an idle moment) are allocated together, FIFO in arrival order. A batch reads the offers, plans
 * and then writes everything in one round trip (#plan): the idempotency keys with their responses, the payments, legs
 * and `payment.matched` events, and one conditional reservation per seller as the last write (so a seller's row is
 * locked only for that reservation and the commit, and written once per batch instead of once per payment). The next
 * batch gathers and plans while this one writes. Each request gets its own answer: a duplicate order_id or too little
 * liquidity fails that request alone (409, nothing of it kept), the others commit.
 *
 * The rules of the single create hold: FIFO (best rate, then the oldest offer; earlier requests of a batch plan
 * first, and batches write in arrival order), no overbooking (the reservation is conditional: a plan from a read the
 * previous batch or another process has overtaken is refused whole and the batch runs the transactional way
 * (#attempt), where a lost race rolls back and plans again from a fresh read, the last attempt with the offers
 * locked), idempotency (a key is claimed in the batch; a key already used makes the statement refuse, and in the
 * transactional way that request goes the single way and replays or conflicts there). A batch that fails for any
 * other reason (a deadlock with another process's batch, say) answers each of its requests by running it alone.
 */
export class PaymentCreateBatcher {
  readonly #deps: PaymentsDeps;
  readonly #max_batch: number;
  readonly #gather_ms: number;
  readonly #onBatchFailed: (error: unknown) => void;
  readonly #onEventsCommitted: () => void;
  readonly stats: CreateBatcherStats = { batches: 0, batched: 0, alone: 0, failed_batches: 0, transactional: 0 };
  #queue: Pending[] = [];
  /** Set from a batch's start until it begins to write: the next batch gathers meanwhile, and starts after. */
  #planning = false;
  /** Settles once the batch started last has written and answered (batches write one at a time, in order). */
  #written: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;

  constructor(deps: PaymentsDeps, options: CreateBatcherOptions = {}) {
    this.#deps = deps;
    this.#max_batch = options.max_batch ?? 128;
    this.#gather_ms = options.gather_ms ?? 1;
    this.#onBatchFailed = options.onBatchFailed ?? (() => {});
    this.#onEventsCommitted = options.onEventsCommitted ?? (() => {});
  }

  /** Every create runs alone while set (the bench measures both ways in one run). */
  bypass = false;

  /** Creates one payment in the next batch; resolves to its own answer or rejects with its own error. */
  create(job: BatchedCreate): Promise<CreateAnswer> {
    if (this.bypass) return job.alone();
    return new Promise((resolve, reject) => {
      this.#queue.push({ ...job, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#planning || this.#timer !== undefined) return;
    if (this.#queue.length >= this.#max_batch) return void this.#drain();
    this.#timer = setTimeout(() => this.#drain(), this.#gather_ms);
  }

  /**
   * Starts the next batch. Two batches overlap at most: one writes (and commits) while the next reads the offers and
   * plans, which is what a batch of another api process does anyway; the writes stay one at a time, in arrival order.
   */
  #drain(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#planning || this.#queue.length === 0) return;
    const jobs = this.#queue.splice(0, this.#max_batch);
    this.#planning = true;
    const previous = this.#written;
    this.#written = this.#run(jobs, previous, () => {
      this.#planning = false;
      // what arrived meanwhile goes at once: it has waited for a whole batch already
      if (this.#queue.length > 0) this.#drain();
    }).catch((error: unknown) => this.#onBatchFailed(error)); // #run answers every request itself; this is a bug's last stop
  }

  /** Plans the batch, waits for the previous one to write, then writes; answers every request. Never rejects. */
  async #run(jobs: Pending[], previous: Promise<void>, writing: () => void): Promise<void> {
    let planned: PlannedBatch | undefined;
    try {
      planned = await this.#plan(jobs);
    } catch {
      // a request that must go the transactional way (see #plan), or a failed read: decided below
    }
    await previous;
    writing();
    let items: Item[] | undefined;
    try {
      if (planned) {
        if (planned.write) {
          await createBatch(this.#deps.db, ...planned.write);
          this.#onEventsCommitted();
        }
        items = planned.items;
      }
    } catch {
      // refused (a key or an order_id in use, an offer taken meanwhile) or failed: the transactional way decides
    }
    if (!items) this.stats.transactional++;
    try {
      for (let attempt = 1; !items; attempt++) {
        try {
          items = await this.#deps.db.transaction().execute((trx) => this.#attempt(trx, jobs, attempt > OPTIMISTIC_ALLOCATION_ATTEMPTS));
          break;
        } catch (error) {
          if (!(error instanceof AllocationRaced) || attempt > OPTIMISTIC_ALLOCATION_ATTEMPTS) throw error;
        }
      }
    } catch (error) {
      // Not one request's fault (or not only one's): each request runs alone and gets its own answer.
      this.stats.failed_batches++;
      this.stats.alone += jobs.length;
      this.#onBatchFailed(error);
      // not awaited: the next batch need not wait for these
      for (const job of jobs) job.alone().then(job.resolve, job.reject);
      return;
    }
    this.stats.batches++;
    for (const item of items!) {
      if (item.error === ALONE) {
        // a used key replays or conflicts on its own, after this batch's commit; not awaited, like the answers
        this.stats.alone++;
        item.job.alone().then(item.job.resolve, item.job.reject);
        continue;
      }
      this.stats.batched++;
      if (item.error !== undefined) item.job.reject(item.error);
      else item.job.resolve({ status: 201, body: ok(item.view!) });
    }
  }

  /**
   * The batch in one round trip, for the common case: the offers are read and the legs planned first (a plain read,
   * FIFO over it as below), then one autocommitted call of `mpay_create_batch` writes the idempotency
   * keys with their responses, the payments, legs and events, and last reserves the offers (locked in FIFO order, each
   * only if it still covers its legs), after the writes' triggers (the webhook fan-out is most of a batch's time in the
   * database): the offers are locked for the reservation and the commit only. The call's text is fixed and its rows
   * are jsonb parameters, so PostgreSQL runs it as a prepared statement instead of parsing and planning a new statement
   * per batch. Two round trips instead of eight. Any surprise (a key or order_id in use, an offer taken or deactivated
   * meanwhile) makes the call refuse (mpay_refuse), so nothing of the batch is kept, and it runs the transactional way
   * (#attempt), which settles each of those cases exactly. Throws when the batch must go that way at once.
   */
  async #plan(jobs: readonly Pending[]): Promise<PlannedBatch> {
    const now = this.#deps.clock.now();
    const items = prepare(jobs);
    const prepared = live(items);
    for (const item of prepared) item.row = paymentRow(item, now);
    await planAll(this.#deps.db, items, false);
    // a request with a key gets its planning error only once its key is known unused (it may be a replay)
    if (prepared.some((item) => item.job.idempotency && item.error !== undefined)) throw new Error('a request with a key failed in planning');
    const created = live(items);
    if (!created.length) return { items };
    for (const item of created) item.view = presentPayment(item.row, legRows(item), this.#deps.public_base_url);

    const keyed = created.filter((item) => item.job.idempotency);
    const claims = keyClaimRows(keyed.map((item) => ({ ...item.job.idempotency!, status: 201, body: ok(item.view!) })), now);
    const holds = heldPerSeller(created);
    return {
      items,
      write: [
        claims.length ? JSON.stringify(claims) : null,
        JSON.stringify(created.map((item) => item.row)),
        JSON.stringify(created.flatMap(legRows)),
        JSON.stringify(eventRows(now, created.map(matchedEvent)).rows),
        holds.map((hold) => hold.seller_id),
        holds.map((hold) => hold.allocated_fiat_amount),
      ],
    };
  }

  /** One try at the whole batch inside `trx`; returns each request's outcome (its error, or its payment and legs). */
  async #attempt(trx: Trx, jobs: readonly Pending[], lock_offers: boolean): Promise<Item[]> {
    const now = this.#deps.clock.now();
    const items = prepare(jobs);
    await claimKeys(trx, items, now);
    await insertPayments(trx, items, now);
    await planAll(trx, items, lock_offers);
    // refused in planning after their insert (a duplicate's row was never inserted: its row is unset)
    const refused = items.filter((item) => item.error !== undefined && item.row !== undefined);
    if (refused.length) await trx.deleteFrom('payments').where('id', 'in', refused.map((item) => item.id)).execute();

    const created = live(items);
    for (const item of created) item.view = presentPayment(item.row, legRows(item), this.#deps.public_base_url);
    if (created.length) {
      await trx.insertInto('payment_legs').values(created.flatMap(legRows)).execute();
      await recordEvents(trx, now, created.map(matchedEvent));
    }
    await settleKeys(trx, items);

    // the last write: one conditional reservation per seller, in FIFO lock order (reserveLegs)
    await reserveLegs(trx, heldPerSeller(created));
    return items;
  }
}

/** A batch planned for its one round trip: each request's outcome, and its call's parameters (none when every request failed). */
interface PlannedBatch {
  items: Item[];
  write?: CreateBatchParameters;
}

type CreateBatchParameters = [claims: string | null, payments: string, legs: string, events: string, seller_ids: string[], held_minor: number[]];

/** The batch's writes in one call (`mpay_create_batch`), a named prepared statement on PostgreSQL. */
const createBatch = preparedQuery<{ done: unknown }, CreateBatchParameters>((db) =>
  db.selectNoFrom(sql`mpay_create_batch(${''}::jsonb, ${''}::jsonb, ${''}::jsonb, ${''}::jsonb, ${[]}::uuid[], ${[]}::bigint[])`.as('done')),
);

/** Marks a request that goes the single way after the batch (its idempotency key was used already). */
const ALONE = Symbol('alone');

const live = (items: readonly Item[]) => items.filter((item) => item.error === undefined);

/** Each request's payment id and amount, or its own error (a bad amount or rail), in arrival order. */
function prepare(jobs: readonly Pending[]): Item[] {
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
async function planAll(executor: Executor, items: readonly Item[], lock_offers: boolean): Promise<void> {
  const books = new Map<string, OfferBook>();
  const sandbox = new Map<string, Leg>();
  for (const item of live(items)) {
    const key = { is_sandbox: item.job.scope.is_sandbox, currency: item.job.input.currency, payment_method: item.payment_method };
    const name = `${key.is_sandbox}/${key.currency}/${key.payment_method}`;
    try {
      if (key.is_sandbox) {
        // the synthetic seller is the same for every part: read once per currency and rail
        let synthetic = sandbox.get(name);
        if (!synthetic) sandbox.set(name, (synthetic = (await allocateSynthetic(executor, key, [1]))[0]!));
        item.legs = [{ ...synthetic, allocated_fiat_amount: item.amount_minor, amount_micro_pay: fiatMinorToMicroPay(item.amount_minor, key.currency, synthetic.rate) }];
        continue;
      }
      let book = books.get(name);
      if (!book) books.set(name, (book = new OfferBook(executor, key, lock_offers)));
      item.legs = await book.plan(item.amount_minor);
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
    for (const leg of item.legs!) per_seller.set(leg.seller_id, (per_seller.get(leg.seller_id) ?? 0) + (leg.reserved_minor ?? leg.allocated_fiat_amount));
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
    quote_lock_id: null,
    expires_at: new Date(now.getTime() + (input.expires_in_seconds ?? DEFAULT_EXPIRES_IN_SECONDS) * 1000),
    created_at: now,
    matched_at: now,
  });
}

function legRows(item: Item): LegRow[] {
  return (item.legs ?? []).map((leg) => ({ payment_id: item.id, ...leg }));
}

/** Claims the requests' idempotency keys in one statement; a request whose key exists already (or twice in this batch) goes alone. */
async function claimKeys(trx: Trx, items: Item[], now: Date): Promise<void> {
  const keyed = live(items).filter((item) => item.job.idempotency);
  if (!keyed.length) return;
  const claimed = await claimIdempotencyKeys(
    trx,
    keyed.map((item) => item.job.idempotency!),
    now,
  );
  keyed.forEach((item, index) => {
    const id = claimed[index];
    if (id === undefined) item.error = ALONE;
    else item.claim_id = id;
  });
}

/** Stores each created payment's response on its key, and gives back the keys of requests that failed (a retry runs anew). */
async function settleKeys(trx: Trx, items: readonly Item[]): Promise<void> {
  const failed = items.filter((item) => item.claim_id !== undefined && item.error !== undefined).map((item) => item.claim_id!);
  const stored = live(items).filter((item) => item.claim_id !== undefined);
  await settleIdempotencyKeys(trx, {
    released: failed,
    responses: stored.map((item) => ({ id: item.claim_id!, status: 201, body: ok(item.view!) })),
  });
}

/** Inserts the payments (as `matched`) in one statement; an order_id that exists (or comes twice in this batch) fails that request: 409. */
async function insertPayments(trx: Trx, items: Item[], now: Date): Promise<void> {
  const fresh = live(items);
  if (!fresh.length) return;
  for (const item of fresh) item.row = paymentRow(item, now);
  const inserted = await trx
    .insertInto('payments')
    .values(fresh.map((item) => ({ ...item.row, metadata: JSON.stringify(item.row.metadata) })))
    .onConflict((conflict) => conflict.constraint('payments_order_id_unique').doNothing())
    .returning('id')
    .execute();
  const ids = new Set(inserted.map((row) => row.id));
  const duplicates = fresh.filter((item) => !ids.has(item.id));
  if (!duplicates.length) return;
  const existing = await trx
    .selectFrom('payments')
    .select(['id', 'merchant_id', 'is_sandbox', 'order_id'])
    .where('order_id', 'in', duplicates.map((item) => item.job.input.order_id))
    .execute();
  for (const item of duplicates) {
    const owner = existing.find((row) => row.merchant_id === item.row.merchant_id && row.is_sandbox === item.row.is_sandbox && row.order_id === item.row.order_id && row.id !== item.id);
    item.error = duplicateOrderId(item.job.input.order_id, owner?.id);
    // its row was never inserted: nothing to delete
    item.row = undefined as unknown as PaymentRow;
  }
}
