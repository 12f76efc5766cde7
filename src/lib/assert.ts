/**
 * TIGER_STYLE assertions: state what must hold, with a message that says why, instead of a non-null `!`. A failed
 * assertion is a bug in our code (or a database that broke a constraint we rely on), never bad input: it is not an
 * AppError, so the error handler logs it with the request id and answers 500 INTERNAL without the message. Each
 * assertion is paired with a second check elsewhere (a database constraint, a test) where one exists.
 */
export class AssertionFailed extends Error {
  constructor(message: string) {
    super(`assertion failed: ${message}`);
    this.name = 'AssertionFailed';
  }
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionFailed(message);
}

/** The value, which must be present (not null or undefined) for the reason in `message`. */
export function present<T>(value: T | null | undefined, message: string): T {
  if (value === null || value === undefined) throw new AssertionFailed(message);
  return value;
}
