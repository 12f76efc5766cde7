/** Time comes from a clock passed in, so expiry, sweepers and retry schedules are testable without sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock a test moves by hand. */
export class ManualClock implements Clock {
  #now_ms: number;

  constructor(start: Date | string = '2026-11-22T00:00:00.000Z') {
    this.#now_ms = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.#now_ms);
  }

  advance(milliseconds: number): void {
    this.#now_ms += milliseconds;
  }

  set(at: Date | string): void {
    this.#now_ms = new Date(at).getTime();
  }
}
