/**
 * The one in-process batcher (group commit, as TigerBeetle batches its clients' requests and PostgreSQL groups
 * commits): items submitted while earlier batches are in flight travel together in one `apply` call, each answered
 * with its own result. Used by the payment create batcher, the ledger's lone transfers, the outbox wake-up and (through
 * settleBatch, for a batch its caller cuts) the sell/buy order matcher's writes.
 *
 * Gathering: what arrives in the same turn of the event loop (after an idle moment, within `gather_ms`) forms a batch
 * of at most `max_batch` items; at most `max_in_flight` batches run at once, and while all run, the next ones gather.
 *
 * The failure rule: a batch whose `apply` rejects re-runs its items alone (`alone`, by default a batch of one through
 * `apply`), one after another in arrival order, each answered by its own run; a batch of one rejects with its error.
 * So one item can never fail the others. Except when `refusesEveryItem` says no item could get past the error (a
 * database too slow to answer): then each item is refused with it at once, instead of waiting out N timeouts in turn.
 */
interface Waiting<Item, Answer> {
  item: Item;
  resolve: (answer: Answer) => void;
  reject: (error: unknown) => void;
}

export interface GroupCommitOptions<Item, Answer> {
  max_in_flight: number;
  max_batch: number;
  /** Wait this long for more items before a batch starts (default: the end of the current turn). */
  gather_ms?: number;
  /**
   * A batch that applied lets the next one start before its own items are answered, so the next batch's work is on
   * its way while these answers are presented and sent (`previous` then settles once this batch has applied).
   */
  next_before_answers?: boolean;
  /** How an item of a failed batch runs alone (default: a batch of one through `apply`). */
  alone?: (item: Item) => Promise<Answer>;
  /** Told of each batch that failed as a whole, before its items run alone (or are refused). */
  onBatchFailed?: (error: unknown, items: readonly Item[]) => void;
  /** A batch error no item would get past alone (a database too slow to answer): every item is refused with it. */
  refusesEveryItem?: (error: unknown) => boolean;
}

export class GroupCommit<Item, Answer> {
  readonly #apply: (items: Item[], previous: Promise<void>) => Promise<Answer[]>;
  readonly #options: GroupCommitOptions<Item, Answer>;
  #queue: Waiting<Item, Answer>[] = [];
  /** Settles when the batch started last is done: applied, or its items answered alone. */
  #done: Promise<void> = Promise.resolve();
  #in_flight = 0;
  #scheduled = false;

  /**
   * `apply` answers each item, in order. `previous` settles when the batch before is done: a batch that awaits it
   * before it writes writes in arrival order while it still plans beside the one before.
   */
  constructor(
    apply: (items: Item[], previous: Promise<void>) => Promise<Answer[]>,
    options: GroupCommitOptions<Item, Answer>,
  ) {
    this.#apply = apply;
    this.#options = options;
  }

  submit(item: Item): Promise<Answer> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#schedule(false);
    });
  }

  /** `behind`: the queued items arrived while a batch was in flight, so they start without waiting for company. */
  #schedule(behind: boolean): void {
    if (this.#scheduled || this.#in_flight >= this.#options.max_in_flight) return;
    this.#scheduled = true;
    const start = () => {
      this.#scheduled = false;
      while (this.#queue.length > 0 && this.#in_flight < this.#options.max_in_flight) {
        const batch = this.#queue.splice(0, this.#options.max_batch);
        this.#in_flight++;
        const previous = this.#done;
        let wrote!: () => void;
        this.#done = new Promise<void>((resolve) => (wrote = resolve));
        let released = false;
        const release = () => {
          if (released) return;
          released = true;
          wrote();
          this.#in_flight--;
          if (this.#queue.length > 0) this.#schedule(true);
        };
        void this.#run(batch, previous, release).finally(release);
      }
    };
    // after an idle moment a batch waits gather_ms for company; a full one, or one that queued behind others, does not
    if (this.#options.gather_ms && !behind && this.#in_flight === 0 && this.#queue.length < this.#options.max_batch) {
      setTimeout(start, this.#options.gather_ms);
    } else setImmediate(start);
  }

  /** Never rejects: every item is answered or refused on its own. */
  async #run(batch: Waiting<Item, Answer>[], previous: Promise<void>, release: () => void): Promise<void> {
    let answers: Answer[];
    try {
      answers = await this.#apply(
        batch.map((entry) => entry.item),
        previous,
      );
    } catch (error) {
      if (batch.length === 1 && !this.#options.alone) return batch[0]?.reject(error);
      this.#options.onBatchFailed?.(
        error,
        batch.map((entry) => entry.item),
      );
      if (this.#options.refusesEveryItem?.(error)) {
        for (const entry of batch) entry.reject(error);
        return;
      }
      // after the batch before, as the batch itself would have written
      await previous;
      const alone =
        this.#options.alone ?? (async (item: Item) => (await this.#apply([item], Promise.resolve()))[0] as Answer);
      for (const entry of batch) await alone(entry.item).then(entry.resolve, entry.reject);
      return;
    }
    if (this.#options.next_before_answers) {
      // the next batch starts (its start is queued first) and is on its way before these answers are presented
      release();
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    for (const [index, entry] of batch.entries()) entry.resolve(answers[index] as Answer);
  }
}

/**
 * The failure rule for a batch its caller has already cut (the matcher plans its pairs inside one transaction): the
 * items go to `apply` together, and if that rejects, each runs alone through `apply`, one after another in arrival
 * order. Resolves to each item's own outcome, in order; never rejects.
 */
export function settleBatch<Item, Answer>(
  items: readonly Item[],
  apply: (items: Item[]) => Promise<Answer[]>,
  options: Pick<GroupCommitOptions<Item, Answer>, 'onBatchFailed' | 'refusesEveryItem'> = {},
): Promise<PromiseSettledResult<Answer>[]> {
  const group = new GroupCommit<Item, Answer>((batch) => apply(batch), {
    ...options,
    max_in_flight: 1,
    max_batch: Math.max(1, items.length),
  });
  return Promise.allSettled(items.map((item) => group.submit(item)));
}
