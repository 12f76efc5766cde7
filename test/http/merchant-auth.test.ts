import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';

describe('merchant credentials: JWT and dashboard session (GET /v1/merchants/me)', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Shop');
  });
  after(() => t.close());

  const me = (headers: Record<string, string>) => t.request({ method: 'GET', url: '/v1/merchants/me', headers });

  it('accepts the merchant JWT issued at creation and by the admin route', async () => {
    const first = await me({ authorization: `Bearer ${merchant.jwt}` });
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json().data, {
      merchant_id: merchant.id,
      name: 'Shop',
      user_id: `owner:${merchant.id}`,
      via: 'jwt',
    });
    const issued = await t.admin('POST', `/admin/merchants/${merchant.id}/tokens`, {
      user_id: 'alice',
      expires_in_seconds: 600,
    });
    assert.equal(issued.statusCode, 201);
    assert.equal(issued.json().data.expires_at, new Date(t.clock.now().getTime() + 600_000).toISOString());
    const alice = await me({ authorization: `Bearer ${issued.json().data.jwt}` });
    assert.equal(alice.json().data.user_id, 'alice');
  });

  it('refuses an expired JWT, a forged one, another algorithm, an API key, and nothing at all with 401', async () => {
    const short = (await t.admin('POST', `/admin/merchants/${merchant.id}/tokens`, { expires_in_seconds: 60 })).json()
      .data.jwt;
    t.clock.advance(61_000);
    const expired = await me({ authorization: `Bearer ${short}` });
    t.clock.advance(-61_000);
    const forged = await new SignJWT({ merchant_id: merchant.id })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('mallory')
      .setIssuer('mpay')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('x'.repeat(48)));
    const payload = merchant.jwt.split('.')[1];
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    for (const response of [
      expired,
      await me({ authorization: `Bearer ${forged}` }),
      await me({ authorization: `Bearer ${unsigned}` }),
      await me({ 'x-api-key': merchant.live }),
      await me({}),
    ]) {
      assert.equal(response.statusCode, 401);
      assert.equal(response.json().error.code, 'UNAUTHORIZED');
    }
  });

  it('a JWT for a merchant that does not exist is 401', async () => {
    const token = await t.admin('POST', `/admin/merchants/${randomUUID()}/tokens`, {});
    assert.equal(token.statusCode, 404);
    assert.equal(token.json().error.code, 'NOT_FOUND');
  });

  it('accepts a dashboard session cookie until it expires', async () => {
    const session = await t.admin('POST', `/admin/merchants/${merchant.id}/sessions`, {
      user_id: 'bob',
      expires_in_seconds: 120,
    });
    assert.equal(session.statusCode, 201);
    const { session_token, cookie } = session.json().data;
    assert.match(cookie, /^mpay_session=\w+; HttpOnly; Secure; SameSite=Lax; Path=\/$/);
    const ok = await me({ cookie: `theme=dark; mpay_session=${session_token}` });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json().data, { merchant_id: merchant.id, name: 'Shop', user_id: 'bob', via: 'session' });
    const stored = await t.db.selectFrom('merchant_sessions').select('token_hash').executeTakeFirstOrThrow();
    assert.notEqual(stored.token_hash, session_token, 'stored hashed');
    t.clock.advance(121_000);
    assert.equal((await me({ cookie: `mpay_session=${session_token}` })).statusCode, 401);
    t.clock.advance(-121_000);
    assert.equal((await me({ cookie: 'mpay_session=forged' })).statusCode, 401);
  });
});
