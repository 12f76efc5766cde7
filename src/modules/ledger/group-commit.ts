/**
 * Group commit for lone transfers (a `transfer` with no caller transaction): the transfers that arrive while
 * earlier ones are in flight travel together in one `ledger_apply` call, as TigerBeetle batches its clients'
 * requests and PostgreSQL groups commits. The items stay independent: each is answered with its own result or
 * refusal, exactly as if it had run alone. A call that fails as a whole (a lost connection, a deadlock) is retried
 * item by item, so one item can never fail the others.
 */
interface Waiting<Item, Answer> {
  item: Item;
  resolve: (answer: Answer) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit<Item, Answer> {
  readonly #apply: (items: Item[]) => Promise<Answer[]>;
  readonly #max_in_flight: number;
  readonly #max_batch: number;
  #queue: Waiting<Item, Answer>[] = [];
  #in_flight = 0;
  #scheduled = false;

  /** `apply` answers each item in order; at most `max_in_flight` calls run at once, each of at most `max_batch` items. */
  constructor(apply: (items: Item[]) => Promise<Answer[]>, options: { max_in_flight: number; max_batch: number }) {
    this.#apply = apply;
    this.#max_in_flight = options.max_in_flight;
    this.#max_batch = options.max_batch;
  }

  submit(item: Item): Promise<Answer> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#schedule();
    });
  }

  /** Gathers what arrives in the same turn of the event loop; a full pipeline gathers until a call returns. */
  #schedule(): void {
    if (this.#scheduled || this.#in_flight >= this.#max_in_flight) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      while (this.#queue.length > 0 && this.#in_flight < this.#max_in_flight) {
        const batch = this.#queue.splice(0, this.#max_batch);
        this.#in_flight++;
        void this.#run(batch).finally(() => {
          this.#in_flight--;
          if (this.#queue.length > 0) this.#schedule();
        });
      }
    });
  }

  async #run(batch: Waiting<Item, Answer>[]): Promise<void> {
    try {
      const answers = await this.#apply(batch.map((entry) => entry.item));
      for (const [index, entry] of batch.entries()) entry.resolve(answers[index] as Answer);
    } catch (error) {
      if (batch.length === 1) {
        batch[0]?.reject(error);
        return;
      }
      await Promise.all(
        batch.map(async (entry) => {
          try {
            entry.resolve((await this.#apply([entry.item]))[0] as Answer);
          } catch (alone) {
            entry.reject(alone);
          }
        }),
      );
    }
  }
}
