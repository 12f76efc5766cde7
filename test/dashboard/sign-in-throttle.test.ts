import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ADDRESS_MAX_FAILURES,
  EMAIL_FREE_FAILURES,
  PAIR_MAX_FAILURES,
  SIGN_IN_WINDOW_MS,
  SignInThrottle,
} from '../../src/http/sign-in-throttle.ts';

describe('the sign-in throttle', () => {
  const throttle = (max_delay_ms = 4_000) => {
    let now_ms = 0;
    return {
      limiter: new SignInThrottle({ now_ms: () => now_ms, max_delay_ms }),
      advance: (ms: number) => void (now_ms += ms),
    };
  };
  const fail = async (limiter: SignInThrottle, address: string, email: string) => {
    const attempt = await limiter.attempt(address, email);
    assert.equal(attempt.refused, false);
    if (!attempt.refused) await attempt.settle(false);
    return attempt;
  };

  it('an email failing from many addresses gets a delay that doubles from 250 ms up to the cap, never a refusal', async () => {
    const { limiter } = throttle(4_000);
    const delays: number[] = [];
    for (let index = 0; index < 40; index += 1) {
      const attempt = await fail(limiter, `198.51.100.${index}`, 'owner@example.com');
      delays.push(attempt.refused ? -1 : attempt.delay_ms);
    }
    assert.deepEqual(delays.slice(0, EMAIL_FREE_FAILURES + 6), [0, 0, 0, 0, 0, 250, 500, 1000, 2000, 4000, 4000]);
    assert.ok(delays.every((delay) => delay >= 0 && delay <= 4_000));
  });

  it("a success ends the email's delay and its pair's count, and does not count against the address", async () => {
    const { limiter } = throttle();
    for (let index = 0; index < 8; index += 1) await fail(limiter, `198.51.100.${index}`, 'owner@example.com');
    const right = await limiter.attempt('203.0.113.1', 'owner@example.com');
    assert.ok(!right.refused && right.delay_ms > 0);
    if (!right.refused) await right.settle(true);
    const next = await limiter.attempt('203.0.113.1', 'owner@example.com');
    assert.ok(!next.refused && next.delay_ms === 0);
  });

  it('refuses a pair after PAIR_MAX_FAILURES and an address after ADDRESS_MAX_FAILURES, for the window only', async () => {
    const { limiter, advance } = throttle(0);
    for (let index = 0; index < PAIR_MAX_FAILURES; index += 1) await fail(limiter, '192.0.2.1', 'a@example.com');
    const refused = await limiter.attempt('192.0.2.1', 'a@example.com');
    assert.deepEqual(refused, { refused: true, retry_after_seconds: SIGN_IN_WINDOW_MS / 1000 });
    assert.equal((await limiter.attempt('192.0.2.2', 'a@example.com')).refused, false, 'another address');
    for (let index = PAIR_MAX_FAILURES; index < ADDRESS_MAX_FAILURES; index += 1)
      await fail(limiter, '192.0.2.1', `other-${index}@example.com`);
    assert.equal((await limiter.attempt('192.0.2.1', 'fresh@example.com')).refused, true);
    advance(SIGN_IN_WINDOW_MS);
    assert.equal((await limiter.attempt('192.0.2.1', 'a@example.com')).refused, false);
  });
});
