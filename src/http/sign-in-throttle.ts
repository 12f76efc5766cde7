/**
 * Failed sign-ins, counted in this process so that guessing is slow and nobody can lock the owner out:
 * - per client address: ADDRESS_MAX_FAILURES in the window, then that address is refused (429) for every email;
 * - per (email, address): PAIR_MAX_FAILURES in the window, then that pair is refused (429), the right password too;
 * - per email across addresses: failures only add a growing delay before the answer (at most `max_delay_ms`), never a
 *   refusal, so a flood from many addresses slows the owner's sign-in by seconds and cannot keep them out.
 * Emails are counted whether or not they exist, so a known and an unknown email get the same answers and delays.
 * An attempt counts as a failure as soon as it starts (and is given back when it succeeds), so concurrent guesses
 * cannot slip past a limit.
 */
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
export const ADDRESS_MAX_FAILURES = 20;
export const PAIR_MAX_FAILURES = 5;
/** Failures of one email (from any address) before each further attempt waits; the wait doubles from 250 ms. */
export const EMAIL_FREE_FAILURES = 5;
const FIRST_DELAY_MS = 250;
const MAX_ENTRIES = 100_000;

interface Window {
  count: number;
  started_ms: number;
}

export type SignInAttempt =
  | { refused: true; retry_after_seconds: number }
  | { refused: false; delay_ms: number; settle(succeeded: boolean): void };

export class SignInThrottle {
  readonly #windows = new Map<string, Window>();
  readonly #now_ms: () => number;
  readonly #max_delay_ms: number;

  constructor(options: { now_ms: () => number; max_delay_ms: number }) {
    this.#now_ms = options.now_ms;
    this.#max_delay_ms = options.max_delay_ms;
  }

  #window(key: string, now_ms: number): Window {
    let window = this.#windows.get(key);
    if (!window || now_ms - window.started_ms >= SIGN_IN_WINDOW_MS) {
      window = { count: 0, started_ms: now_ms };
      if (this.#windows.size >= MAX_ENTRIES) this.#evict(now_ms);
      this.#windows.set(key, window);
    }
    return window;
  }

  #evict(now_ms: number): void {
    for (const [key, window] of this.#windows)
      if (now_ms - window.started_ms >= SIGN_IN_WINDOW_MS) this.#windows.delete(key);
  }

  /** Before the password is checked: refused, or how long to wait first and how to report the outcome. */
  attempt(address: string, email: string): SignInAttempt {
    const now_ms = this.#now_ms();
    const by_address = this.#window(`address\n${address}`, now_ms);
    const by_pair = this.#window(`pair\n${email}\n${address}`, now_ms);
    const by_email = this.#window(`email\n${email}`, now_ms);
    for (const [window, max] of [
      [by_pair, PAIR_MAX_FAILURES],
      [by_address, ADDRESS_MAX_FAILURES],
    ] as const) {
      if (window.count >= max)
        return {
          refused: true,
          retry_after_seconds: Math.max(1, Math.ceil((window.started_ms + SIGN_IN_WINDOW_MS - now_ms) / 1000)),
        };
    }
    const extra = by_email.count - EMAIL_FREE_FAILURES;
    const delay_ms = extra < 0 ? 0 : Math.min(this.#max_delay_ms, FIRST_DELAY_MS * 2 ** Math.min(extra, 20));
    by_address.count += 1;
    by_pair.count += 1;
    by_email.count += 1;
    return {
      refused: false,
      delay_ms,
      settle: (succeeded) => {
        if (!succeeded) return;
        // the person got in: their email's and this pair's failures end, and the attempt was not a failure of the address
        by_address.count = Math.max(0, by_address.count - 1);
        by_pair.count = 0;
        by_email.count = 0;
      },
    };
  }
}
