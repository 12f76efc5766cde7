import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/db/database.ts';
import { sha256Hex } from '../../src/lib/crypto.ts';
import { CredentialCache } from '../../src/modules/merchants/credential-cache.ts';
import { insertSession } from '../../src/modules/merchants/sessions.ts';
import type { PaymentCreateBatcher } from '../../src/modules/payments/create-batch.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { openTestDatabase } from '../helpers/database.ts';

describe('credential cache: forgotten at the commit of a change, bounded', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant();
  });
  after(() => t.close());
  const whoami = (key: string) => t.call('GET', '/v1/payments?limit=1', key);

  it('rolling a key: the old one is refused at once, the new one works, other kinds are untouched', async () => {
    assert.equal((await whoami(merchant.live)).statusCode, 200, 'cached now');
    const rolled = await t.admin('POST', `/admin/merchants/${merchant.id}/api-keys/roll`, { kind: 'live' });
    assert.equal(rolled.statusCode, 201, rolled.body);
    const { key, kind, revoked, key_hint } = rolled.json().data;
    assert.deepEqual([kind, revoked], ['live', 1]);
    assert.match(key, /^svc_live_[0-9A-Za-z]{40}$/);
    assert.equal(key_hint, `${key.slice(0, 13)}…${key.slice(-4)}`);
    assert.equal((await whoami(merchant.live)).statusCode, 401);
    assert.equal((await whoami(key)).statusCode, 200);
    assert.equal((await whoami(merchant.sandbox)).statusCode, 200);
    merchant = { ...merchant, live: key };
  });

  it('a key revoked by any writer (raw SQL here) is refused on the very next request', async () => {
    assert.equal((await whoami(merchant.sandbox)).statusCode, 200, 'cached now');
    assert.equal((await whoami(merchant.sandbox)).statusCode, 200, 'served from the cache');
    await t.db
      .updateTable('api_keys')
      .set({ revoked_at: t.clock.now() })
      .where('merchant_id', '=', merchant.id)
      .where('kind', '=', 'sandbox')
      .execute();
    assert.equal((await whoami(merchant.sandbox)).statusCode, 401);
  });

  it('a key in its grace period works until the grace ends, then is refused without a change to hear of', async () => {
    const ends_at = new Date(t.clock.now().getTime() + 60_000);
    await t.db
      .updateTable('api_keys')
      .set({ revoked_at: ends_at })
      .where('merchant_id', '=', merchant.id)
      .where('kind', '=', 'test')
      .execute();
    assert.equal((await whoami(merchant.test)).statusCode, 200, 'in its grace period, cached now');
    t.clock.advance(59_999);
    assert.equal((await whoami(merchant.test)).statusCode, 200);
    t.clock.advance(1);
    assert.equal((await whoami(merchant.test)).statusCode, 401, "the cache never grants past the key's own end");
  });

  it('a seller key rolled (POST /admin/sellers/{id}/keys) is refused on the very next request; any writer of its hash moves the epoch, a liquidity change does not', async () => {
    const seller = (await t.createSeller(thbSeller(100_000, '35.00', '0833333333'))) as {
      id: string;
      seller_key: string;
    };
    const legs = (key: string) => t.request({ method: 'GET', url: '/v1/seller/legs', headers: { 'x-api-key': key } });
    const epoch = async () =>
      Number((await t.db.selectFrom('credential_epoch').select('epoch').executeTakeFirstOrThrow()).epoch);
    assert.equal((await legs(seller.seller_key)).statusCode, 200, 'cached now');
    assert.equal((await legs(seller.seller_key)).statusCode, 200, 'served from the cache');
    const before_liquidity = await epoch();
    await t.db.updateTable('sellers').set({ active: false }).where('id', '=', seller.id).execute();
    assert.equal(await epoch(), before_liquidity, 'a change that is not a credential keeps the cache');
    const rolled = await t.admin('POST', `/admin/sellers/${seller.id}/keys`);
    assert.equal(rolled.statusCode, 201, rolled.body);
    assert.equal(await epoch(), before_liquidity + 1);
    assert.equal((await legs(seller.seller_key)).statusCode, 401);
    const fresh = rolled.json().data.seller_key as string;
    assert.equal((await legs(fresh)).statusCode, 200, 'cached now');
    await t.db
      .updateTable('sellers')
      .set({ key_hash: sha256Hex(randomUUID()) })
      .where('id', '=', seller.id)
      .execute();
    assert.equal((await legs(fresh)).statusCode, 401, 'a raw write of the hash is heard too');
  });

  it('roll: 404 for an unknown merchant, 400 for an unknown kind, 401 without the admin token', async () => {
    assert.equal(
      (
        await t.admin('POST', '/admin/merchants/00000000-0000-4000-8000-000000000000/api-keys/roll', { kind: 'live' })
      ).json().error.code,
      'NOT_FOUND',
    );
    assert.equal(
      (await t.admin('POST', `/admin/merchants/${merchant.id}/api-keys/roll`, { kind: 'gold' })).statusCode,
      400,
    );
    assert.equal(
      (await t.call('POST', `/admin/merchants/${merchant.id}/api-keys/roll`, merchant.live, { kind: 'live' }))
        .statusCode,
      401,
    );
  });

  it('the cache keeps at most max_entries (oldest out first), an entry only under its epoch and before its end', () => {
    const cache = new CredentialCache(t.db, { max_entries: 2, max_age_ms: 10_000 });
    const principal = (merchant_id: string) => ({
      kind: 'key' as const,
      merchant_id,
      key_id: merchant_id,
      key_kind: 'live' as const,
      is_sandbox: false,
    });
    cache.set('h1', principal('m1'), 7, Infinity, 0);
    cache.set('h2', principal('m2'), 7, 1_000, 0);
    cache.set('h3', principal('m1'), 7, Infinity, 0);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('h1', 7, 0), undefined);
    assert.equal(cache.get<ReturnType<typeof principal>>('h2', 7, 999)?.merchant_id, 'm2');
    assert.equal(cache.get('h2', 7, 1_000), undefined, 'past its own end');
    assert.equal(cache.get('h3', 8, 0), undefined, 'read under another epoch');
    cache.set('h3', principal('m1'), 8, Infinity, 0);
    assert.equal(cache.get('h3', 8, 10_000), undefined, 'past the max age');
    cache.set('h3', principal('m1'), 8, Infinity, 0);
    cache.forgetMerchant('m1');
    assert.equal(cache.get('h3', 8, 0), undefined);
  });
});

describe('credential epoch carried in the statement: a change between authentication and the statement holds', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant();
    await t.createSeller(thbSeller());
  });
  after(() => t.close());
  const batcher = () => t.application.payments.create_batcher as PaymentCreateBatcher;
  const revoke = (kind: 'live' | 'test' | 'sandbox') =>
    t.db
      .updateTable('api_keys')
      .set({ revoked_at: t.clock.now() })
      .where('merchant_id', '=', merchant.id)
      .where('kind', '=', kind)
      .execute();
  const trade = (key: string, order_id: string, headers?: Record<string, string>) =>
    t.call(
      'POST',
      '/v1/trades',
      key,
      { return_url: 'https://shop.example/return', currency: 'THB', amount: 1_000, order_id },
      headers,
    );
  const payments = async () =>
    Number(
      (
        await t.db
          .selectFrom('payments')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('merchant_id', '=', merchant.id)
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('a key revoked after its request was authenticated and before the create call: 401, nothing created', async () => {
    const created = await trade(merchant.sandbox, 'carried-1');
    assert.equal(created.statusCode, 201, created.body);
    const before_count = await payments();
    const before_stats = { ...batcher().stats };
    const create = batcher().create.bind(batcher());
    // the revocation commits after the request's credential was verified (from the cache) and before its batch's call
    batcher().create = async (job) => {
      await revoke('sandbox');
      return create(job);
    };
    try {
      const refused = await trade(merchant.sandbox, 'carried-2', { 'idempotency-key': 'carried-key-2' });
      assert.equal(refused.statusCode, 401, refused.body);
    } finally {
      batcher().create = create;
    }
    assert.equal(await payments(), before_count, 'the refused call kept nothing');
    assert.equal(batcher().stats.refused, before_stats.refused + 1, 'the call refused itself');
    const keys = await t.db.selectFrom('idempotency_keys').select('key').where('key', '=', 'carried-key-2').execute();
    assert.deepEqual(keys, [], 'no stored response');
    assert.equal((await trade(merchant.sandbox, 'carried-3')).statusCode, 401);
  });

  it('a change to another credential moves the epoch: the cached key authenticates again and its create commits', async () => {
    const created = await trade(merchant.test, 'carried-4');
    assert.equal(created.statusCode, 201, created.body);
    await t.db
      .updateTable('credential_epoch')
      .set((eb) => ({ epoch: eb('epoch', '+', 1) }))
      .execute();
    const again = await trade(merchant.test, 'carried-5');
    assert.equal(again.statusCode, 201, again.body);
    const read = await t.call('GET', `/v1/trades/${again.json().data.id}`, merchant.test);
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(read.json().data.order_id, 'carried-5');
  });

  it('a read by id and a list with a key revoked after it was cached: 401, not the row', async () => {
    const created = await trade(merchant.live, 'carried-6');
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().data.id;
    assert.equal((await t.call('GET', `/v1/payments/${id}`, merchant.live)).statusCode, 200, 'cached now');
    assert.equal((await t.call('GET', '/v1/payments?limit=25', merchant.live)).statusCode, 200);
    await revoke('live');
    assert.equal((await t.call('GET', `/v1/payments/${id}`, merchant.live)).statusCode, 401);
    assert.equal(
      (await t.call('GET', '/v1/payments/00000000-0000-4000-8000-000000000000', merchant.live)).statusCode,
      401,
    );
    assert.equal((await t.call('GET', `/v1/trades/${id}`, merchant.live)).statusCode, 401);
    assert.equal((await t.call('GET', '/v1/payments?limit=25', merchant.live)).statusCode, 401);
  });

  it('a request that fails before its statement (bad input) with a key revoked after it was cached: 401, not the 400', async () => {
    const shop = await t.createMerchant('Revoked Before Statement');
    assert.equal((await t.call('GET', '/v1/payments?limit=1', shop.live)).statusCode, 200, 'cached now');
    const bad_body = () => t.call('POST', '/v1/trades', shop.live, { currency: 'THB', amount: 'ten' });
    const bad_query = () => t.call('GET', '/v1/payments?limit=zero', shop.live);
    assert.equal((await bad_body()).statusCode, 400, 'a working key gets the validation error');
    assert.equal((await bad_query()).statusCode, 400);
    await t.db.updateTable('api_keys').set({ revoked_at: t.clock.now() }).where('merchant_id', '=', shop.id).execute();
    for (const refused of [await bad_body(), await bad_query()]) {
      assert.equal(refused.statusCode, 401, refused.body);
      assert.equal(refused.json().error.code, 'UNAUTHORIZED');
    }
  });
});

describe('credential cache: two application instances on one PostgreSQL database', {
  skip: !process.env['DATABASE_URL'],
}, () => {
  let a: TestApp;
  let b: TestApp;
  let merchant: TestMerchant;
  before(async () => {
    const database = await openTestDatabase();
    a = await startTestApp({ database });
    const second = await openDatabase({ database_url: database.url, data_dir: 'memory://' });
    b = await startTestApp({ database: { ...second, url: database.url }, clock: a.clock });
    merchant = await a.createMerchant();
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  it('a key rolled through one instance is refused by the other on its next request', async () => {
    assert.equal((await b.call('GET', '/v1/payments?limit=1', merchant.live)).statusCode, 200, 'cached in b');
    assert.equal((await b.call('GET', '/v1/payments?limit=1', merchant.live)).statusCode, 200);
    const rolled = await a.request({
      method: 'POST',
      url: `/admin/merchants/${merchant.id}/api-keys/roll`,
      headers: {
        authorization: 'Bearer test-admin-token-0123456789abcdef',
        'x-actor-user-id': 'ops-1',
        'x-actor-role': 'super_admin',
      },
      payload: { kind: 'live' },
    });
    assert.equal(rolled.statusCode, 201, rolled.body);
    assert.equal((await b.call('GET', '/v1/payments?limit=1', merchant.live)).statusCode, 401);
    assert.equal((await b.call('GET', '/v1/payments?limit=1', rolled.json().data.key)).statusCode, 200);
  });

  it('a seller key rolled through one instance is refused by the other on its next request', async () => {
    const seller = (await a.createSeller(thbSeller(100_000, '35.00', '0844444444'))) as {
      id: string;
      seller_key: string;
    };
    const legs = (key: string) => b.request({ method: 'GET', url: '/v1/seller/legs', headers: { 'x-api-key': key } });
    assert.equal((await legs(seller.seller_key)).statusCode, 200, 'cached in b');
    assert.equal((await legs(seller.seller_key)).statusCode, 200);
    const rolled = await a.admin('POST', `/admin/sellers/${seller.id}/keys`);
    assert.equal(rolled.statusCode, 201, rolled.body);
    assert.equal((await legs(seller.seller_key)).statusCode, 401);
    assert.equal((await legs(rolled.json().data.seller_key)).statusCode, 200);
  });

  it("a merchant's tokens revoked through one instance: its JWT is refused by the other at once", async () => {
    const jwt = { authorization: `Bearer ${merchant.jwt}` };
    assert.equal((await b.request({ method: 'GET', url: '/v1/merchant-sell-orders', headers: jwt })).statusCode, 200);
    a.clock.advance(1_000);
    assert.equal((await a.admin('POST', `/admin/merchants/${merchant.id}/tokens/revoke`)).statusCode, 200);
    assert.equal((await b.request({ method: 'GET', url: '/v1/merchant-sell-orders', headers: jwt })).statusCode, 401);
  });

  it("a session ended, or its user's role changed, through one instance holds in the other at once", async () => {
    const user_id = randomUUID();
    await a.db
      .insertInto('merchant_users')
      .values({
        id: user_id,
        merchant_id: merchant.id,
        email: `${user_id}@shop.test`,
        role: 'owner',
        created_at: a.clock.now(),
      })
      .execute();
    const session = async () => {
      const token = randomUUID();
      const id = randomUUID();
      await insertSession(a.db, {
        id,
        token_hash: sha256Hex(token),
        merchant_id: merchant.id,
        user_id,
        merchant_user_id: user_id,
        expires_at: new Date(a.clock.now().getTime() + 3600_000),
        idle_expires_at: new Date(a.clock.now().getTime() + 1800_000),
        created_at: a.clock.now(),
      });
      return { id, headers: { cookie: `mpay_session=${token}` } };
    };
    const owner = await session();
    const sell = () =>
      b.request({ method: 'POST', url: '/v1/merchant-sell-orders', headers: owner.headers, payload: {} });
    assert.equal(
      (await b.request({ method: 'GET', url: '/v1/merchant-sell-orders', headers: owner.headers })).statusCode,
      200,
    );
    assert.notEqual((await sell()).statusCode, 403, 'an owner may move money (the empty body is refused for itself)');
    await a.db.updateTable('merchant_users').set({ role: 'viewer' }).where('id', '=', user_id).execute();
    assert.equal((await sell()).statusCode, 403, 'a viewer may not, from the next request on');

    const other = await session();
    assert.equal(
      (await b.request({ method: 'GET', url: '/v1/merchant-sell-orders', headers: other.headers })).statusCode,
      200,
    );
    await a.db.updateTable('merchant_sessions').set({ revoked_at: a.clock.now() }).where('id', '=', other.id).execute();
    assert.equal(
      (await b.request({ method: 'GET', url: '/v1/merchant-sell-orders', headers: other.headers })).statusCode,
      401,
    );
  });
});
