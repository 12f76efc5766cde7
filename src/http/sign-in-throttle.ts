import { MemoryAuthCounters, type AuthCounters } from './auth-counters.ts';

/**
 * Failed sign-ins, counted in the rate limits' store (Redis, else PostgreSQL; memory on PGlite), so that every api
 * process shares one budget, guessing is slow and nobody can lock the owner out:
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

export type SignInAttempt =
  | { refused: true; retry_after_seconds: number }
  | { refused: false; delay_ms: number; settle(succeeded: boolean): Promise<void> };

export class SignInThrottle {
  readonly #counters: AuthCounters;
  readonly #now_ms: () => number;
  readonly #max_delay_ms: number;

  /** `counters`: where the windows live (shared by every api process: auth-counters.ts); `now_ms`: for Retry-After. */
  constructor(options: { counters?: AuthCounters; now_ms: () => number; max_delay_ms: number }) {
    this.#now_ms = options.now_ms;
    this.#counters = options.counters ?? new MemoryAuthCounters();
    this.#max_delay_ms = options.max_delay_ms;
  }

  /** Before the password is checked: refused, or how long to wait first and how to report the outcome. */
  async attempt(address: string, email: string): Promise<SignInAttempt> {
    const address_key = `sign-in:address\n${address}`;
    const pair_key = `sign-in:pair\n${email}\n${address}`;
    const email_key = `sign-in:email\n${email}`;
    // counted before it is checked, so concurrent guesses cannot slip past a limit (in any process)
    const [by_address, by_pair] = await this.#counters.count(
      [
        { key: address_key, by: 1 },
        { key: pair_key, by: 1 },
      ],
      SIGN_IN_WINDOW_MS,
      this.#now_ms(),
    );
    for (const [window, max] of [
      [by_pair!, PAIR_MAX_FAILURES],
      [by_address!, ADDRESS_MAX_FAILURES],
    ] as const) {
      if (window.count > max) {
        // a refused attempt is not a failure: given back
        await this.#counters.count(
          [
            { key: address_key, by: -1 },
            { key: pair_key, by: -1 },
          ],
          SIGN_IN_WINDOW_MS,
          this.#now_ms(),
        );
        return {
          refused: true,
          retry_after_seconds: Math.max(1, Math.ceil((window.started_ms + SIGN_IN_WINDOW_MS - this.#now_ms()) / 1000)),
        };
      }
    }
    const [by_email] = await this.#counters.count([{ key: email_key, by: 1 }], SIGN_IN_WINDOW_MS, this.#now_ms());
    const extra = by_email!.count - 1 - EMAIL_FREE_FAILURES;
    const delay_ms = extra < 0 ? 0 : Math.min(this.#max_delay_ms, FIRST_DELAY_MS * 2 ** Math.min(extra, 20));
    return {
      refused: false,
      delay_ms,
      settle: async (succeeded) => {
        if (!succeeded) return;
        // the person got in: their email's and this pair's failures end, and the attempt was not a failure of the address
        await this.#counters.count(
          [
            { key: address_key, by: -1 },
            { key: pair_key, to: 0 },
            { key: email_key, to: 0 },
          ],
          SIGN_IN_WINDOW_MS,
          this.#now_ms(),
        );
      },
    };
  }
}
