import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sha256Hex } from '../../src/lib/crypto.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { addUser, cookieOf, form, PASSWORD, signIn } from './helpers.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const MINUTE_MS = 60_000;

describe('dashboard users: the admin invitation route', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Invite Shop');
  });
  after(() => t.close());

  it("201 with a one-time link; only the token's hash is stored; the link sets the password once", async () => {
    const response = await t.admin('POST', `/admin/merchants/${merchant.id}/users`, {
      email: 'Dev@Invite.Example',
      role: 'developer',
    });
    assert.equal(response.statusCode, 201, response.body);
    const data = response.json().data;
    assert.equal(data.user.email, 'dev@invite.example');
    assert.equal(data.user.role, 'developer');
    assert.equal(data.user.status, 'invited');
    assert.match(data.invitation_url, /^http:\/\/gateway\.test\/dashboard\/invite\/[0-9A-Za-z]{43}$/);
    assert.equal(data.invitation_expires_at, new Date(t.clock.now().getTime() + 72 * 3600_000).toISOString());
    const token = data.invitation_url.split('/').pop();
    const row = await t.db
      .selectFrom('merchant_users')
      .selectAll()
      .where('id', '=', data.user.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.invitation_token_hash, sha256Hex(token));
    assert.equal(row.password_hash, null);

    const page = await t.request({ method: 'GET', url: `/dashboard/invite/${token}` });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /dev@invite\.example/);
    const short = await t.request({
      method: 'POST',
      url: `/dashboard/invite/${token}`,
      payload: form({ password: 'short' }),
      headers: FORM,
    });
    assert.equal(short.statusCode, 400, 'a too-short password is refused and the link stays usable');
    const accepted = await t.request({
      method: 'POST',
      url: `/dashboard/invite/${token}`,
      payload: form({ password: PASSWORD }),
      headers: FORM,
    });
    assert.equal(accepted.statusCode, 303);
    assert.equal(accepted.headers.location, '/dashboard');
    cookieOf(accepted);
    const stored = await t.db
      .selectFrom('merchant_users')
      .selectAll()
      .where('id', '=', data.user.id)
      .executeTakeFirstOrThrow();
    assert.match(stored.password_hash ?? '', /^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    assert.equal(stored.invitation_token_hash, null);
    const again = await t.request({
      method: 'POST',
      url: `/dashboard/invite/${token}`,
      payload: form({ password: 'another long password' }),
      headers: FORM,
    });
    assert.equal(again.statusCode, 404, 'the link works once');
  });

  it('an invitation expires after 72 hours', async () => {
    const response = await t.admin('POST', `/admin/merchants/${merchant.id}/users`, {
      email: 'late@invite.example',
      role: 'viewer',
    });
    const token = response.json().data.invitation_url.split('/').pop();
    t.clock.advance(72 * 3600_000);
    const late = await t.request({
      method: 'POST',
      url: `/dashboard/invite/${token}`,
      payload: form({ password: PASSWORD }),
      headers: FORM,
    });
    assert.equal(late.statusCode, 404);
    assert.equal(
      (
        await t.db
          .selectFrom('merchant_users')
          .select('password_hash')
          .where('email', '=', 'late@invite.example')
          .executeTakeFirstOrThrow()
      ).password_hash,
      null,
    );
  });

  it('errors: duplicate email 409 (any case, also when racing), unknown merchant 404, bad body 400, leaving no rows', async () => {
    await addUser(t, merchant.id, 'dup@invite.example', 'viewer');
    const duplicate = await t.admin('POST', `/admin/merchants/${merchant.id}/users`, {
      email: 'DUP@invite.example',
      role: 'owner',
    });
    assert.equal(duplicate.statusCode, 409);
    assert.equal(duplicate.json().error.code, 'MERCHANT_USER_EXISTS');
    const racing = await Promise.all(
      Array.from({ length: 8 }, () =>
        t.admin('POST', `/admin/merchants/${merchant.id}/users`, { email: 'race@invite.example', role: 'viewer' }),
      ),
    );
    assert.deepEqual(racing.map((r) => r.statusCode).sort(), [201, 409, 409, 409, 409, 409, 409, 409]);
    const unknown = await t.admin('POST', '/admin/merchants/00000000-0000-4000-8000-000000000000/users', {
      email: 'x@invite.example',
      role: 'owner',
    });
    assert.equal(unknown.statusCode, 404);
    for (const body of [
      { email: 'not-an-email', role: 'owner' },
      { email: 'y@invite.example', role: 'admin' },
      { email: 'y@invite.example' },
      { email: 'y@invite.example', role: 'owner', extra: 1 },
    ]) {
      const bad = await t.admin('POST', `/admin/merchants/${merchant.id}/users`, body);
      assert.equal(bad.statusCode, 400, JSON.stringify(body));
      assert.equal(bad.json().error.code, 'VALIDATION_ERROR');
    }
    const count = await t.db
      .selectFrom('merchant_users')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('email', 'in', ['x@invite.example', 'y@invite.example'])
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 0);
  });

  it('401 without the admin token, 403 for a role other than super_admin', async () => {
    const none = await t.request({
      method: 'POST',
      url: `/admin/merchants/${merchant.id}/users`,
      payload: { email: 'z@invite.example', role: 'owner' },
    });
    assert.equal(none.statusCode, 401);
    const wrong_role = await t.request({
      method: 'POST',
      url: `/admin/merchants/${merchant.id}/users`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-actor-user-id': 'ops', 'x-actor-role': 'support' },
      payload: { email: 'z@invite.example', role: 'owner' },
    });
    assert.equal(wrong_role.statusCode, 403);
    assert.equal(wrong_role.json().error.code, 'ADMIN_FORBIDDEN');
    const with_key = await t.call('POST', `/admin/merchants/${merchant.id}/users`, merchant.live, {
      email: 'z@invite.example',
      role: 'owner',
    });
    assert.equal(with_key.statusCode, 401);
  });
});

const SIGN_IN_MAX_DELAY_MS = 400;

describe('dashboard sign-in, lock-out, sessions and CSRF', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  before(async () => {
    t = await startTestApp({ env: { SIGN_IN_MAX_DELAY_MS: String(SIGN_IN_MAX_DELAY_MS) } });
    merchant = await t.createMerchant('Auth Shop');
    await addUser(t, merchant.id, 'owner@auth.example', 'owner');
    await addUser(t, merchant.id, 'locked@auth.example', 'viewer');
    await addUser(t, merchant.id, 'race@auth.example', 'viewer');
  });
  after(() => t.close());

  const attempt = (email: string, password: string) =>
    t.request({ method: 'POST', url: '/dashboard/sign-in', payload: form({ email, password }), headers: FORM });

  it('signs in with a hashed, HttpOnly, SameSite=Strict session cookie; wrong password or unknown email is 401', async () => {
    const wrong = await attempt('owner@auth.example', 'not the password');
    assert.equal(wrong.statusCode, 401);
    assert.match(wrong.body, /Wrong email or password/);
    assert.equal(wrong.headers['set-cookie'], undefined);
    assert.equal((await attempt('nobody@auth.example', PASSWORD)).statusCode, 401);

    const response = await attempt('OWNER@auth.example', PASSWORD);
    assert.equal(response.statusCode, 303);
    const set_cookie = String(response.headers['set-cookie']);
    assert.match(
      set_cookie,
      /^mpay_session=[0-9A-Za-z]{48}; Path=\/dashboard; HttpOnly; SameSite=Strict; Max-Age=43200$/,
      'no Secure flag on an http base URL',
    );
    const token = cookieOf(response).split('=')[1]!;
    const row = await t.db
      .selectFrom('merchant_sessions')
      .selectAll()
      .where('token_hash', '=', sha256Hex(token))
      .executeTakeFirstOrThrow();
    assert.equal(row.merchant_id, merchant.id);
    assert.equal(row.is_sandbox, false);
    const pages = await t.request({ method: 'GET', url: '/dashboard', headers: { cookie: `mpay_session=${token}` } });
    assert.equal(pages.statusCode, 200);
    assert.match(String(pages.headers['content-security-policy']), /script-src 'self'; style-src 'self'/);
    assert.doesNotMatch(pages.body, /<script>(?!<\/script>)/, 'no inline script');
    // The same session is accepted by the merchant API routes (it is the existing mpay_session mechanism).
    const me = await t.request({
      method: 'GET',
      url: '/v1/merchants/me',
      headers: { cookie: `mpay_session=${token}` },
    });
    assert.equal(me.statusCode, 200);
    assert.equal(me.json().data.merchant_id, merchant.id);
  });

  it('no session: pages redirect to sign-in, posts are 401', async () => {
    const page = await t.request({ method: 'GET', url: '/dashboard/payments' });
    assert.equal(page.statusCode, 303);
    assert.equal(page.headers.location, '/dashboard/sign-in');
    const post = await t.request({
      method: 'POST',
      url: '/dashboard/mode',
      payload: form({ mode: 'sandbox' }),
      headers: FORM,
    });
    assert.equal(post.statusCode, 401);
    const forged = await t.request({
      method: 'GET',
      url: '/dashboard',
      headers: { cookie: 'mpay_session=forged-token' },
    });
    assert.equal(forged.statusCode, 303);
  });

  const from = (address: string, email: string, password: string) =>
    t.request({
      method: 'POST',
      url: '/dashboard/sign-in',
      payload: form({ email, password }),
      headers: FORM,
      remoteAddress: address,
    });

  it('5 failures of one email from one address in 15 minutes refuse that pair (429, the right password too); another address signs in', async () => {
    for (let index = 0; index < 5; index++)
      assert.equal((await from('192.0.2.10', 'locked@auth.example', `wrong-${index}`)).statusCode, 401);
    const sixth = await from('192.0.2.10', 'locked@auth.example', 'wrong-6');
    assert.equal(sixth.statusCode, 429);
    assert.equal(sixth.headers['retry-after'], '900');
    assert.match(sixth.body, /Too many failed attempts from this address/);
    assert.equal(
      (await from('192.0.2.10', 'locked@auth.example', PASSWORD)).statusCode,
      429,
      'refused even with the right password',
    );
    assert.equal(
      (await from('192.0.2.11', 'locked@auth.example', PASSWORD)).statusCode,
      303,
      'the account itself is never locked',
    );
    t.clock.advance(15 * MINUTE_MS);
    assert.equal((await from('192.0.2.10', 'locked@auth.example', PASSWORD)).statusCode, 303);
  });

  it('an unknown email gets the same answers as a known one with a wrong password', async () => {
    for (const email of ['owner@auth.example', 'nobody-at-all@auth.example']) {
      const statuses: number[] = [];
      for (let index = 0; index < 6; index++)
        statuses.push((await from('192.0.2.20', email, 'wrong password')).statusCode);
      assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429], email);
    }
    t.clock.advance(15 * MINUTE_MS);
  });

  it('20 failures from one address refuse that address for every email; other addresses are unaffected', async () => {
    for (let index = 0; index < 20; index++)
      assert.equal((await from('192.0.2.30', `guess-${index}@auth.example`, 'wrong')).statusCode, 401);
    assert.equal((await from('192.0.2.30', 'owner@auth.example', PASSWORD)).statusCode, 429);
    assert.equal((await from('192.0.2.31', 'owner@auth.example', PASSWORD)).statusCode, 303);
    t.clock.advance(15 * MINUTE_MS);
  });

  it('failures of one email from many addresses only slow it down, within SIGN_IN_MAX_DELAY_MS; the owner still signs in', async () => {
    for (let address = 0; address < 3; address++) {
      for (let index = 0; index < 4; index++)
        assert.equal((await from(`198.51.100.${address}`, 'owner@auth.example', 'wrong')).statusCode, 401);
    }
    const started = performance.now();
    const owner = await from('203.0.113.5', 'owner@auth.example', PASSWORD);
    const waited_ms = performance.now() - started;
    assert.equal(owner.statusCode, 303);
    assert.ok(waited_ms >= SIGN_IN_MAX_DELAY_MS - 20, `waited ${Math.round(waited_ms)} ms`);
    assert.ok(waited_ms < SIGN_IN_MAX_DELAY_MS + 5_000, `waited ${Math.round(waited_ms)} ms`);
  });

  it('20 concurrent wrong guesses cannot slip past the limit: exactly 5 are checked, the rest refused', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) => from('192.0.2.40', 'race@auth.example', `guess-${index}`)),
    );
    const statuses = results.map((r) => r.statusCode);
    assert.equal(
      statuses.filter((status) => status === 401).length,
      5,
      `exactly 5 plain failures before the refusal: ${statuses}`,
    );
    assert.equal(statuses.filter((status) => status === 429).length, 15);
    assert.equal((await from('192.0.2.40', 'race@auth.example', PASSWORD)).statusCode, 429);
  });

  it("revoking the merchant's tokens ends its dashboard sessions at the next request (pages and API alike); a new sign-in works", async () => {
    const browser = await signIn(t, 'owner@auth.example');
    assert.equal((await browser.get('/dashboard/account')).statusCode, 200);
    t.clock.advance(1_000);
    assert.equal((await t.admin('POST', `/admin/merchants/${merchant.id}/tokens/revoke`)).statusCode, 200);
    const page = await browser.get('/dashboard/account');
    assert.equal(page.statusCode, 303);
    assert.equal(page.headers.location, '/dashboard/sign-in');
    assert.equal((await browser.post('/dashboard/mode', { mode: 'sandbox' })).statusCode, 401);
    assert.equal(
      (await t.request({ method: 'GET', url: '/v1/merchants/me', headers: { cookie: browser.cookie } })).statusCode,
      401,
    );
    t.clock.advance(1_000);
    const again = await signIn(t, 'owner@auth.example');
    assert.equal((await again.get('/dashboard/account')).statusCode, 200);
  });

  it('idle timeout: 30 minutes without a request end the session; activity keeps it alive', async () => {
    const browser = await signIn(t, 'owner@auth.example');
    t.clock.advance(25 * MINUTE_MS);
    assert.equal((await browser.get('/dashboard/account')).statusCode, 200);
    t.clock.advance(25 * MINUTE_MS);
    assert.equal(
      (await browser.get('/dashboard/account')).statusCode,
      200,
      'the last request pushed the idle deadline',
    );
    t.clock.advance(30 * MINUTE_MS);
    const expired = await browser.get('/dashboard/account');
    assert.equal(expired.statusCode, 303);
    assert.equal(expired.headers.location, '/dashboard/sign-in');
    const api = await t.request({ method: 'GET', url: '/v1/merchants/me', headers: { cookie: browser.cookie } });
    assert.equal(api.statusCode, 401, 'the API honours the idle timeout too');
  });

  it('absolute timeout: 12 hours after sign-in the session ends however active', async () => {
    const browser = await signIn(t, 'owner@auth.example');
    for (let hour = 0; hour < 11; hour++) {
      t.clock.advance(20 * MINUTE_MS);
      assert.equal((await browser.get('/dashboard/account')).statusCode, 200);
      t.clock.advance(20 * MINUTE_MS);
      assert.equal((await browser.get('/dashboard/account')).statusCode, 200);
      t.clock.advance(20 * MINUTE_MS);
      assert.equal((await browser.get('/dashboard/account')).statusCode, 200);
    }
    for (const minutes of [20, 20, 19]) {
      t.clock.advance(minutes * MINUTE_MS);
      assert.equal((await browser.get('/dashboard/account')).statusCode, 200, '11 h 59 min after sign-in');
    }
    t.clock.advance(2 * MINUTE_MS);
    assert.equal((await browser.get('/dashboard/account')).statusCode, 303);
  });

  it("CSRF: a post without the token, with a wrong one or another session's is 403 and changes nothing; the header works", async () => {
    const browser = await signIn(t, 'owner@auth.example');
    const other = await signIn(t, 'owner@auth.example');
    const mode = async () =>
      (
        await t.db
          .selectFrom('merchant_sessions')
          .select('is_sandbox')
          .where('token_hash', '=', sha256Hex(browser.cookie.split('=')[1]!))
          .executeTakeFirstOrThrow()
      ).is_sandbox
        ? 'sandbox'
        : 'live';
    const missing = await browser.post('/dashboard/mode', { mode: 'sandbox' }, { csrf: false });
    assert.equal(missing.statusCode, 403);
    assert.match(missing.body, /security token/);
    assert.equal(
      (await browser.post('/dashboard/mode', { mode: 'sandbox', _csrf: 'f'.repeat(64) }, { csrf: false })).statusCode,
      403,
    );
    assert.equal(
      (await browser.post('/dashboard/mode', { mode: 'sandbox', _csrf: other.csrf }, { csrf: false })).statusCode,
      403,
    );
    assert.equal((await browser.post('/dashboard/sign-out', {}, { csrf: false })).statusCode, 403);
    assert.equal(await mode(), 'live');
    const via_header = await t.request({
      method: 'POST',
      url: '/dashboard/mode',
      payload: form({ mode: 'sandbox' }),
      headers: { ...FORM, cookie: browser.cookie, 'x-csrf-token': browser.csrf },
    });
    assert.equal(via_header.statusCode, 303);
    assert.equal(await mode(), 'sandbox');
    // The sandbox view's session is a sandbox principal for the API as well.
    const balance = await t.request({ method: 'GET', url: '/dashboard/payments', headers: { cookie: browser.cookie } });
    assert.match(balance.body, /Sandbox view/);
  });

  it('a cross-site sign-in post (foreign Origin) is refused', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/dashboard/sign-in',
      payload: form({ email: 'owner@auth.example', password: PASSWORD }),
      headers: { ...FORM, origin: 'https://evil.example' },
    });
    assert.equal(response.statusCode, 403);
    assert.equal(response.headers['set-cookie'], undefined);
  });

  it('sign-out ends the session for the dashboard and the API', async () => {
    const browser = await signIn(t, 'owner@auth.example');
    const out = await browser.post('/dashboard/sign-out');
    assert.equal(out.statusCode, 303);
    assert.match(
      String(out.headers['set-cookie']),
      /^mpay_session=; Path=\/dashboard; HttpOnly; SameSite=Strict; Max-Age=0$/,
    );
    assert.equal((await browser.get('/dashboard')).statusCode, 303);
    assert.equal(
      (await t.request({ method: 'GET', url: '/v1/merchants/me', headers: { cookie: browser.cookie } })).statusCode,
      401,
    );
  });

  it('password change checks the current password and signs out the other sessions only', async () => {
    await addUser(t, merchant.id, 'changer@auth.example', 'finance');
    const here = await signIn(t, 'changer@auth.example');
    const elsewhere = await signIn(t, 'changer@auth.example');
    const wrong = await here.post('/dashboard/account/password', {
      current_password: 'wrong',
      new_password: 'a brand new password',
    });
    assert.equal(wrong.statusCode, 401);
    const changed = await here.post('/dashboard/account/password', {
      current_password: PASSWORD,
      new_password: 'a brand new password',
    });
    assert.equal(changed.statusCode, 303);
    assert.equal((await here.get('/dashboard/account')).statusCode, 200);
    assert.equal((await elsewhere.get('/dashboard/account')).statusCode, 303);
    assert.equal((await attempt('changer@auth.example', PASSWORD)).statusCode, 401);
    assert.equal((await attempt('changer@auth.example', 'a brand new password')).statusCode, 303);
  });
});

describe('dashboard behind https', () => {
  it('marks the session cookie Secure when PUBLIC_BASE_URL is https', async () => {
    const t = await startTestApp({ env: { PUBLIC_BASE_URL: 'https://pay.example' } });
    try {
      const merchant = await t.createMerchant('Secure Shop');
      await addUser(t, merchant.id, 'owner@secure.example', 'owner');
      const response = await t.request({
        method: 'POST',
        url: '/dashboard/sign-in',
        payload: form({ email: 'owner@secure.example', password: PASSWORD }),
        headers: FORM,
      });
      assert.equal(response.statusCode, 303);
      assert.match(String(response.headers['set-cookie']), /; HttpOnly; SameSite=Strict; Max-Age=43200; Secure$/);
    } finally {
      await t.close();
    }
  });
});
