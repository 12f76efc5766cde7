import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { rollKeys } from '../../src/modules/merchants/keys.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { createSell, expectError, fund, merchantCall, PAY, sellBody } from '../helpers/orders.ts';

type TokenBody = {
  access_token: string;
  merchant_id: string;
  token_type: string;
  expires_in: number;
  expires_at: string;
  mode: string;
};

describe('POST /v1/auth/token: a secret API key traded for a merchant JWT in its mode', () => {
  let t: TestApp;
  let merchant: TestMerchant;

  const exchange = (headers: Record<string, string>, body?: unknown) =>
    t.request({
      method: 'POST',
      url: '/v1/auth/token',
      headers,
      ...(body === undefined ? {} : { payload: body as object }),
    });
  const tokenFor = async (key: string, body?: unknown): Promise<TokenBody> => {
    const response = await exchange({ 'x-api-key': key }, body);
    assert.equal(response.statusCode, 200, response.body);
    return response.json().data;
  };
  const me = (jwt: string) =>
    t.request({ method: 'GET', url: '/v1/merchants/me', headers: { authorization: `Bearer ${jwt}` } });

  before(async () => {
    t = await startTestApp({ env: { JWT_MAX_LIFETIME_SECONDS: String(24 * 3600) } });
    merchant = await t.createMerchant('Token Shop');
    await fund(t, merchant.id, 40 * PAY, false);
    await fund(t, merchant.id, 7 * PAY, true);
  });
  after(() => t.close());

  it('answers an OAuth-style token (also at the top level), not cacheable, with the key in X-API-Key or Bearer', async () => {
    const response = await exchange({ 'x-api-key': merchant.live }, { grant_type: 'client_credentials' });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['cache-control'], 'no-store');
    const body = response.json();
    assert.equal(body.success, true);
    assert.deepEqual(
      {
        token_type: body.data.token_type,
        expires_in: body.data.expires_in,
        mode: body.data.mode,
        merchant_id: body.data.merchant_id,
      },
      { token_type: 'Bearer', expires_in: 900, mode: 'live', merchant_id: merchant.id },
    );
    assert.equal(body.data.expires_at, new Date(t.clock.now().getTime() + 900_000).toISOString());
    for (const field of ['access_token', 'merchant_id', 'token_type', 'expires_in', 'expires_at', 'mode'])
      assert.equal(body[field], body.data[field]);
    const claims = decodeJwt(body.access_token);
    assert.deepEqual([claims['merchant_id'], claims['mode'], claims.exp! - claims.iat!], [merchant.id, 'live', 900]);

    const bearer = await exchange({ authorization: `Bearer ${merchant.sandbox}` });
    assert.equal(bearer.statusCode, 200, bearer.body);
    assert.equal(bearer.json().data.mode, 'sandbox');
    const seen = await me(body.access_token);
    assert.equal(seen.statusCode, 200, seen.body);
    assert.deepEqual(seen.json().data, {
      merchant_id: merchant.id,
      name: 'Token Shop',
      user_id: `key:${claims['key_id']}`,
      via: 'jwt',
    });
  });

  it('the token reaches the payout (sell and buy order), balance and dispute routes', async () => {
    const jwt = (await tokenFor(merchant.live)).access_token;
    const balance = await merchantCall(t, jwt, 'GET', `/v1/merchants/${merchant.id}/balance`);
    assert.equal(balance.statusCode, 200, balance.body);
    assert.equal(balance.json().data.available_micro_pay, 40 * PAY);

    const sell = await createSell(t, jwt, sellBody(3 * PAY));
    assert.equal(sell.status, 'pending');
    const read = await merchantCall(t, jwt, 'GET', `/v1/merchant-sell-orders/${sell.id}`);
    assert.equal(read.statusCode, 200, read.body);
    assert.equal((await merchantCall(t, jwt, 'GET', '/v1/merchant-buy-orders')).statusCode, 200);

    const dispute = await merchantCall(t, jwt, 'POST', '/v1/merchant-disputes', {
      sell_order_id: sell.id,
      notes: 'Buyer says it paid twice',
    });
    assert.equal(dispute.statusCode, 201, dispute.body);
    assert.deepEqual([dispute.json().data.kind, dispute.json().data.status], ['merchant_dispute', 'opened']);
    const disputes = await merchantCall(t, jwt, 'GET', '/v1/merchant-disputes');
    assert.deepEqual(
      (disputes.json().data as { id: string }[]).map((row) => row.id),
      [dispute.json().data.id],
    );
    assert.equal(
      (await merchantCall(t, jwt, 'GET', `/v1/merchants/${merchant.id}/balance`)).json().data.available_micro_pay,
      37 * PAY,
    );
  });

  it("a sandbox or test key's token sees only sandbox rows, a live key's only live rows", async () => {
    const live = (await tokenFor(merchant.live)).access_token;
    const sandbox = await tokenFor(merchant.sandbox);
    const test = await tokenFor(merchant.test);
    assert.deepEqual([sandbox.mode, test.mode], ['sandbox', 'sandbox']);

    const sandbox_sell = await createSell(t, sandbox.access_token, sellBody(2 * PAY));
    const from_test_key = await merchantCall(
      t,
      test.access_token,
      'GET',
      `/v1/merchant-sell-orders/${sandbox_sell.id}`,
    );
    assert.equal(from_test_key.statusCode, 200, from_test_key.body);
    assert.equal(from_test_key.json().data.is_sandbox, true);
    expectError(await merchantCall(t, live, 'GET', `/v1/merchant-sell-orders/${sandbox_sell.id}`), 404, 'NOT_FOUND');

    const sandbox_list = (await merchantCall(t, sandbox.access_token, 'GET', '/v1/merchant-sell-orders')).json()
      .data as { id: string; is_sandbox: boolean }[];
    assert.deepEqual(
      sandbox_list.map((order) => order.id),
      [sandbox_sell.id],
    );
    const live_list = (await merchantCall(t, live, 'GET', '/v1/merchant-sell-orders')).json().data as {
      id: string;
      is_sandbox: boolean;
    }[];
    assert.ok(live_list.length > 0 && live_list.every((order) => !order.is_sandbox));
    assert.equal((await merchantCall(t, sandbox.access_token, 'GET', '/v1/merchant-disputes')).json().data.length, 0);

    const balance = await merchantCall(t, sandbox.access_token, 'GET', `/v1/merchants/${merchant.id}/balance`);
    assert.equal(balance.json().data.available_micro_pay, 5 * PAY);
    // The sandbox balance cannot pay for a live-sized sell order.
    expectError(
      await merchantCall(t, sandbox.access_token, 'POST', '/v1/merchant-sell-orders', sellBody(6 * PAY)),
      409,
      'SELL_ORDER_INSUFFICIENT_BALANCE',
    );
  });

  it('refuses every credential that is not a secret API key with 401, saying what it wants', async () => {
    const jwt = (await tokenFor(merchant.live)).access_token;
    const session = await t.admin('POST', `/admin/merchants/${merchant.id}/sessions`, { user_id: 'dash-user' });
    const refused = [
      await exchange({}),
      await exchange({ authorization: `Bearer ${jwt}` }),
      await exchange({ authorization: `Bearer ${merchant.jwt}` }),
      await exchange({ cookie: `mpay_session=${session.json().data.session_token}` }),
      await exchange({
        authorization: `Bearer ${ADMIN_TOKEN}`,
        'x-actor-user-id': 'ops-1',
        'x-actor-role': 'super_admin',
      }),
      await exchange({ 'x-api-key': `svc_live_${'x'.repeat(40)}` }),
      await exchange({ 'x-api-key': 'pk_live_publishable' }),
    ];
    for (const response of refused) expectError(response, 401, 'UNAUTHORIZED');
    assert.match(
      refused[1]!.json().error.message,
      /secret API key \(svc_live_…, svc_test_… or svc_sandbox_…\), not a JWT/,
    );
    assert.match(refused[0]!.json().error.message, /send X-API-Key or Authorization: Bearer/);
  });

  it('takes a lifetime up to an hour, and no longer than JWT_MAX_LIFETIME_SECONDS', async () => {
    const short = await tokenFor(merchant.live, { ttl_seconds: 120 });
    assert.equal(short.expires_in, 120);
    assert.equal((await me(short.access_token)).statusCode, 200);
    t.clock.advance(121_000);
    expectError(await me(short.access_token), 401, 'UNAUTHORIZED');
    expectError(await exchange({ 'x-api-key': merchant.live }, { ttl_seconds: 3601 }), 400, 'VALIDATION_ERROR');
    expectError(await exchange({ 'x-api-key': merchant.live }, { ttl_seconds: 59 }), 400, 'VALIDATION_ERROR');
    expectError(await exchange({ 'x-api-key': merchant.live }, { grant_type: 'password' }), 400, 'VALIDATION_ERROR');

    const capped = await startTestApp({ env: { JWT_MAX_LIFETIME_SECONDS: '600' } });
    try {
      const shop = await capped.createMerchant('Capped');
      const response = await capped.request({
        method: 'POST',
        url: '/v1/auth/token',
        headers: { 'x-api-key': shop.live },
      });
      assert.equal(response.json().data.expires_in, 600);
      const too_long = await capped.request({
        method: 'POST',
        url: '/v1/auth/token',
        headers: { 'x-api-key': shop.live },
        payload: { ttl_seconds: 900 },
      });
      expectError(too_long, 400, 'VALIDATION_ERROR');
    } finally {
      await capped.close();
    }
  });

  it('a token ends with its key: at once when the key is revoked, at the end of a roll grace period otherwise', async () => {
    const shop = await t.createMerchant('Rolling Shop');
    const token = (await tokenFor(shop.live)).access_token;
    const sandbox_token = (await tokenFor(shop.sandbox)).access_token;
    const deps = { db: t.db, clock: t.clock };
    const sandbox_key_id = String(decodeJwt(sandbox_token)['key_id']);
    await rollKeys(deps, shop.id, { key_id: sandbox_key_id }, 600);
    assert.equal((await me(sandbox_token)).statusCode, 200);
    t.clock.advance(601_000);
    expectError(await me(sandbox_token), 401, 'UNAUTHORIZED');

    const rolled = await t.admin('POST', `/admin/merchants/${shop.id}/api-keys/roll`, { kind: 'live' });
    assert.equal(rolled.statusCode, 201, rolled.body);
    expectError(await me(token), 401, 'UNAUTHORIZED');
    expectError(await exchange({ 'x-api-key': shop.live }), 401, 'UNAUTHORIZED');
    const fresh = (await tokenFor(rolled.json().data.key)).access_token;
    assert.equal((await me(fresh)).statusCode, 200);
  });

  it("the operator's roll by kind ends a key still in an earlier roll's grace at once, and never lengthens a grace", async () => {
    const shop = await t.createMerchant('Leaked Key Shop');
    const deps = { db: t.db, clock: t.clock };
    const leaked_id = String(decodeJwt((await tokenFor(shop.live)).access_token)['key_id']);
    const dashboard_roll = await rollKeys(deps, shop.id, { key_id: leaked_id }, 86_400);
    assert.equal((await exchange({ 'x-api-key': shop.live })).statusCode, 200, 'the rolled key works in its grace');

    const rolled = await t.admin('POST', `/admin/merchants/${shop.id}/api-keys/roll`, { kind: 'live' });
    assert.equal(rolled.statusCode, 201, rolled.body);
    expectError(await exchange({ 'x-api-key': shop.live }), 401, 'UNAUTHORIZED');
    expectError(await exchange({ 'x-api-key': dashboard_roll.raw_key }), 401, 'UNAUTHORIZED');
    const ended = await t.db
      .selectFrom('api_keys')
      .select(['id', 'revoked_at'])
      .where('id', 'in', [leaked_id, dashboard_roll.key.id])
      .execute();
    for (const key of ended) assert.equal(key.revoked_at?.getTime(), t.clock.now().getTime(), key.id);

    // a roll with a longer grace than a key has left keeps the key's own end
    const short = await rollKeys(deps, shop.id, { kind: 'live' }, 60);
    await rollKeys(deps, shop.id, { kind: 'live' }, 3_600);
    const end = async (id: string) =>
      (
        await t.db.selectFrom('api_keys').select('revoked_at').where('id', '=', id).executeTakeFirstOrThrow()
      ).revoked_at?.getTime();
    assert.equal(short.previous.length, 1);
    assert.equal(await end(short.previous[0]!.id), t.clock.now().getTime() + 60_000, 'the shorter grace stands');
    assert.equal(await end(short.key.id), t.clock.now().getTime() + 3_600_000, 'the working key gets the new grace');
  });

  it("the merchant's token revocation ends key tokens too; a new exchange works afterwards", async () => {
    const shop = await t.createMerchant('Revoking Shop');
    const token = (await tokenFor(shop.live)).access_token;
    t.clock.advance(1500);
    assert.equal((await t.admin('POST', `/admin/merchants/${shop.id}/tokens/revoke`)).statusCode, 200);
    expectError(await me(token), 401, 'UNAUTHORIZED');
    assert.equal((await me((await tokenFor(shop.live)).access_token)).statusCode, 200);
  });

  it("refuses a token whose key claim names another merchant's key or another mode", async () => {
    const { SignJWT } = await import('jose');
    const other = await t.createMerchant('Other Shop');
    const other_key_id = String(decodeJwt((await tokenFor(other.live)).access_token)['key_id']);
    const own_live_key_id = String(decodeJwt((await tokenFor(merchant.live)).access_token)['key_id']);
    const secret = new TextEncoder().encode(t.application.secrets.secrets.jwt_secret);
    const now_s = Math.floor(t.clock.now().getTime() / 1000);
    const forge = (key_id: string, mode: string) =>
      new SignJWT({ merchant_id: merchant.id, mode, key_id })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('u')
        .setIssuer('mpay')
        .setIssuedAt(now_s)
        .setExpirationTime(now_s + 600)
        .sign(secret);
    assert.equal((await me(await forge(own_live_key_id, 'live'))).statusCode, 200);
    expectError(await me(await forge(other_key_id, 'live')), 401, 'UNAUTHORIZED');
    expectError(await me(await forge(own_live_key_id, 'sandbox')), 401, 'UNAUTHORIZED');
    expectError(await me(await forge('not-a-key', 'live')), 401, 'UNAUTHORIZED');
  });
});
