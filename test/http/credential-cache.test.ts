import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { API_KEY_CACHE_TTL_MS, ApiKeyCache } from '../../src/modules/merchants/credentials.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';

describe('API key cache: brief in-process trust, forgotten on roll, bounded', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant();
  });
  after(() => t.close());
  const whoami = (key: string) => t.call('GET', '/v1/payments?limit=1', key);

  it('rolling a key: the old one is refused at once in this process, the new one works, other kinds are untouched', async () => {
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

  it('a key revoked by another process stays usable here at most API_KEY_CACHE_TTL_MS', async () => {
    assert.equal((await whoami(merchant.sandbox)).statusCode, 200, 'cached now');
    // another process revokes it: this process is not told
    await t.db
      .updateTable('api_keys')
      .set({ revoked_at: t.clock.now() })
      .where('merchant_id', '=', merchant.id)
      .where('kind', '=', 'sandbox')
      .execute();
    t.clock.advance(API_KEY_CACHE_TTL_MS - 1);
    assert.equal((await whoami(merchant.sandbox)).statusCode, 200, 'still trusted inside the TTL');
    t.clock.advance(1);
    assert.equal((await whoami(merchant.sandbox)).statusCode, 401, 'refused once the entry expired');
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

  it('the cache keeps at most max_entries (oldest out first), never past the TTL, and forgets a merchant on request', () => {
    const cache = new ApiKeyCache({ ttl_ms: 1_000, max_entries: 2 });
    const principal = (merchant_id: string) => ({
      kind: 'key' as const,
      merchant_id,
      key_id: merchant_id,
      key_kind: 'live' as const,
      is_sandbox: false,
    });
    cache.set('h1', principal('m1'), 0);
    cache.set('h2', principal('m2'), 0);
    cache.set('h3', principal('m1'), 0);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('h1', 0), undefined);
    assert.equal(cache.get('h2', 999)?.merchant_id, 'm2');
    assert.equal(cache.get('h2', 1_000), undefined);
    cache.forgetMerchant('m1');
    assert.equal(cache.get('h3', 0), undefined);
  });
});
