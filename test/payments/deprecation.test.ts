import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';

/** POST /v1/payments carries Deprecation, Sunset and Link on every response, errors included. */
describe('POST /v1/payments: deprecation headers on every response', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  before(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_LIVE_PER_SECOND: '3' } });
    merchant = await t.createMerchant();
    await t.createSeller(thbSeller());
  });
  after(() => t.close());

  const create = (key: string | undefined, body: Record<string, unknown>) => t.call('POST', '/v1/payments', key, body);
  const body = (order_id: string) => ({ order_id, amount: 100, currency: 'THB', return_url: 'https://shop.example/r' });
  const assertDeprecated = (response: Awaited<ReturnType<typeof create>>, status: number) => {
    assert.equal(response.statusCode, status, response.body);
    assert.match(String(response.headers['deprecation']), /^@\d+$/);
    assert.equal(response.headers['sunset'], 'Fri, 24 Jul 2026 00:00:00 GMT');
    assert.equal(response.headers['link'], '</v1/trades>; rel="successor-version"');
  };

  it('201, 400, 401, 409 and 429 all carry Deprecation, Sunset and Link', async () => {
    assertDeprecated(await create(merchant.live, body('dep-1')), 201);
    assertDeprecated(await create(merchant.live, { order_id: 'dep-2' }), 400);
    assertDeprecated(await create(undefined, body('dep-3')), 401);
    assertDeprecated(await create(merchant.live, body('dep-1')), 409);
    let limited: Awaited<ReturnType<typeof create>> | undefined;
    for (let i = 0; i < 10 && !limited; i++) {
      const response = await create(merchant.live, body(`dep-rl-${i}`));
      if (response.statusCode === 429) limited = response;
    }
    assert.ok(limited, 'the rate limit answered 429');
    assertDeprecated(limited, 429);
  });
});
