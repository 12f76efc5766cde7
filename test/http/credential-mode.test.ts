import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { buyBody, createBuy, createSell, expectError, fund, merchantCall, PAY, sellBody } from '../helpers/orders.ts';

/** Merchant JWTs and dashboard sessions carry a mode; JWTs need `exp`, have a capped lifetime, and can be revoked. */
describe('merchant JWT and session mode: sandbox and live rows never mix', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let live_jwt: string;
  let sandbox_jwt: string;

  const mint = async (merchant_id: string, body: Record<string, unknown>) => {
    const response = await t.admin('POST', `/admin/merchants/${merchant_id}/tokens`, body);
    assert.equal(response.statusCode, 201, response.body);
    return response.json().data as { jwt: string; mode: string; expires_at: string };
  };
  const session = async (merchant_id: string, mode?: string) => {
    const response = await t.admin('POST', `/admin/merchants/${merchant_id}/sessions`, {
      user_id: 'dash-user',
      ...(mode ? { mode } : {}),
    });
    assert.equal(response.statusCode, 201, response.body);
    return `mpay_session=${response.json().data.session_token}`;
  };
  const balance = async (headers: Record<string, string>) => {
    const response = await t.request({ method: 'GET', url: `/v1/merchants/${merchant.id}/balance`, headers });
    assert.equal(response.statusCode, 200, response.body);
    return response.json().data as { available_micro_pay: number };
  };

  before(async () => {
    t = await startTestApp({ env: { JWT_MAX_LIFETIME_SECONDS: String(24 * 3600) } });
    merchant = await t.createMerchant();
    live_jwt = (await mint(merchant.id, {})).jwt;
    const sandbox = await mint(merchant.id, { mode: 'sandbox' });
    assert.equal(sandbox.mode, 'sandbox');
    sandbox_jwt = sandbox.jwt;
    await fund(t, merchant.id, 50 * PAY, false);
    await fund(t, merchant.id, 20 * PAY, true);
  });
  after(() => t.close());

  it('a sandbox JWT creates a sell order a live JWT cannot see, and the other way round', async () => {
    const sandbox_order = await createSell(t, sandbox_jwt, sellBody(2 * PAY));
    const live_order = await createSell(t, live_jwt, sellBody(3 * PAY));

    expectError(
      await merchantCall(t, live_jwt, 'GET', `/v1/merchant-sell-orders/${sandbox_order.id}`),
      404,
      'NOT_FOUND',
    );
    expectError(
      await merchantCall(t, sandbox_jwt, 'GET', `/v1/merchant-sell-orders/${live_order.id}`),
      404,
      'NOT_FOUND',
    );
    const live_list = (await merchantCall(t, live_jwt, 'GET', '/v1/merchant-sell-orders')).json().data as {
      id: string;
      is_sandbox: boolean;
    }[];
    const sandbox_list = (await merchantCall(t, sandbox_jwt, 'GET', '/v1/merchant-sell-orders')).json().data as {
      id: string;
      is_sandbox: boolean;
    }[];
    assert.deepEqual(
      live_list.map((order) => order.id),
      [live_order.id],
    );
    assert.deepEqual(
      sandbox_list.map((order) => order.id),
      [sandbox_order.id],
    );
    assert.ok(sandbox_list.every((order) => order.is_sandbox) && live_list.every((order) => !order.is_sandbox));
    // A live JWT cannot cancel the sandbox order either.
    expectError(
      await merchantCall(t, live_jwt, 'POST', `/v1/merchant-sell-orders/${sandbox_order.id}/cancel`, {}),
      404,
      'NOT_FOUND',
    );
  });

  it("keeps the sandbox balance apart from the live one (the reserve comes from the mode's own account)", async () => {
    // After the first test: live 50 - 3 reserved, sandbox 20 - 2 reserved.
    assert.equal((await balance({ authorization: `Bearer ${live_jwt}` })).available_micro_pay, 47 * PAY);
    assert.equal((await balance({ authorization: `Bearer ${sandbox_jwt}` })).available_micro_pay, 18 * PAY);
    // Selling more than the sandbox balance fails even though live has enough.
    expectError(
      await merchantCall(t, sandbox_jwt, 'POST', '/v1/merchant-sell-orders', sellBody(19 * PAY)),
      409,
      'SELL_ORDER_INSUFFICIENT_BALANCE',
    );
  });

  it('separates buy orders and disputes by mode as well', async () => {
    const sandbox_buy = await createBuy(t, sandbox_jwt, buyBody(1 * PAY));
    expectError(await merchantCall(t, live_jwt, 'GET', `/v1/merchant-buy-orders/${sandbox_buy.id}`), 404, 'NOT_FOUND');
    const live_buys = (await merchantCall(t, live_jwt, 'GET', '/v1/merchant-buy-orders')).json().data as unknown[];
    assert.equal(live_buys.length, 0);
    const sandbox_disputes = await merchantCall(t, sandbox_jwt, 'GET', '/v1/merchant-disputes');
    assert.equal(sandbox_disputes.statusCode, 200);
  });

  it('gives dashboard sessions a mode too (live by default)', async () => {
    const live_cookie = await session(merchant.id);
    const sandbox_cookie = await session(merchant.id, 'sandbox');
    assert.equal((await balance({ cookie: live_cookie })).available_micro_pay, 47 * PAY);
    assert.equal((await balance({ cookie: sandbox_cookie })).available_micro_pay, 18 * PAY);
    const listed = await t.request({
      method: 'GET',
      url: '/v1/merchant-sell-orders',
      headers: { cookie: sandbox_cookie },
    });
    assert.ok((listed.json().data as { is_sandbox: boolean }[]).every((order) => order.is_sandbox));
  });

  it('refuses JWTs without exp, living longer than the cap, or with an unknown mode', async () => {
    const key = new TextEncoder().encode(t.application.secrets.secrets.jwt_secret);
    const now_s = Math.floor(t.clock.now().getTime() / 1000);
    const forge = (claims: Record<string, unknown>, exp?: number) => {
      const jwt = new SignJWT({ merchant_id: merchant.id, ...claims })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('u')
        .setIssuer('mpay')
        .setIssuedAt(now_s);
      return (exp === undefined ? jwt : jwt.setExpirationTime(exp)).sign(key);
    };
    const me = (jwt: string) =>
      t.request({ method: 'GET', url: '/v1/merchants/me', headers: { authorization: `Bearer ${jwt}` } });
    assert.equal((await me(await forge({}, now_s + 3600))).statusCode, 200);
    expectError(await me(await forge({})), 401, 'UNAUTHORIZED');
    expectError(await me(await forge({}, now_s + 24 * 3600 + 1)), 401, 'UNAUTHORIZED');
    expectError(await me(await forge({ mode: 'test' }, now_s + 60)), 401, 'UNAUTHORIZED');
    // The admin route mints within the cap and refuses more.
    const minted = await mint(merchant.id, { ttl_seconds: 3600 });
    assert.equal(minted.expires_at, new Date((now_s + 3600) * 1000).toISOString());
    const too_long = await t.admin('POST', `/admin/merchants/${merchant.id}/tokens`, { ttl_seconds: 24 * 3600 + 1 });
    expectError(too_long, 400, 'VALIDATION_ERROR');
  });

  it('revokes every JWT and session issued before the revocation; new ones work', async () => {
    const other = await t.createMerchant('Other');
    const old_jwt = (await mint(other.id, {})).jwt;
    const old_cookie = await session(other.id);
    const me = (headers: Record<string, string>) => t.request({ method: 'GET', url: '/v1/merchants/me', headers });
    assert.equal((await me({ authorization: `Bearer ${old_jwt}` })).statusCode, 200);

    t.clock.advance(1500);
    const revoked = await t.admin('POST', `/admin/merchants/${other.id}/tokens/revoke`);
    assert.equal(revoked.statusCode, 200, revoked.body);
    expectError(await me({ authorization: `Bearer ${old_jwt}` }), 401, 'UNAUTHORIZED');
    expectError(await me({ cookie: old_cookie }), 401, 'UNAUTHORIZED');
    expectError(await me({ authorization: `Bearer ${other.jwt}` }), 401, 'UNAUTHORIZED');
    // Minted in the same instant as the revocation: valid.
    const fresh = (await mint(other.id, {})).jwt;
    assert.equal((await me({ authorization: `Bearer ${fresh}` })).statusCode, 200);
    assert.equal((await me({ cookie: await session(other.id) })).statusCode, 200);
    // Another merchant's tokens are untouched.
    assert.equal((await me({ authorization: `Bearer ${live_jwt}` })).statusCode, 200);
    expectError(
      await t.admin('POST', '/admin/merchants/00000000-0000-4000-8000-000000000000/tokens/revoke'),
      404,
      'NOT_FOUND',
    );
  });
});
