import type { Logger } from 'pino';

export interface Job {
  name: string;
  interval_ms: number;
  /** One pass; resolves to how much it did (used to run again at once while there is work). */
  run: () => Promise<number>;
}

/**
 * Runs each job on its interval, one pass at a time per job, and at once when woken. Coordination between
 * processes is the jobs' business (row locks, SKIP LOCKED, advisory locks), never an in-memory flag here.
 */
export class Scheduler {
  readonly #jobs = new Map<string, { job: Job; timer?: NodeJS.Timeout; running?: Promise<void>; again: boolean }>();
  readonly #log: Logger;
  #stopped = true;

  constructor(log: Logger) {
    this.#log = log;
  }

  add(job: Job): void {
    this.#jobs.set(job.name, { job, again: false });
  }

  start(): void {
    this.#stopped = false;
    for (const name of this.#jobs.keys()) this.wake(name);
  }

  /** Runs the job now (or right after the pass in progress). */
  wake(name: string): void {
    const entry = this.#jobs.get(name);
    if (!entry || this.#stopped) return;
    if (entry.running) {
      entry.again = true;
      return;
    }
    clearTimeout(entry.timer);
    entry.running = (async () => {
      let did = 0;
      try {
        did = await entry.job.run();
      } catch (error) {
        this.#log.error({ err: error, job: name }, 'job pass failed');
      }
      entry.running = undefined;
      if (this.#stopped) return;
      if (entry.again || did > 0) {
        entry.again = false;
        setImmediate(() => this.wake(name));
      } else {
        entry.timer = setTimeout(() => this.wake(name), entry.job.interval_ms);
        entry.timer.unref();
      }
    })();
  }

  /** The names of the jobs, in the order they were added. */
  names(): string[] {
    return [...this.#jobs.keys()];
  }

  /** One pass of a job, awaited (the simulation and tests drive workers step by step with it). */
  async runOnce(name: string): Promise<number> {
    const entry = this.#jobs.get(name);
    if (!entry) throw new Error(`no job named ${name}`);
    return entry.job.run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const entry of this.#jobs.values()) clearTimeout(entry.timer);
    await Promise.all([...this.#jobs.values()].map((entry) => entry.running));
  }
}
