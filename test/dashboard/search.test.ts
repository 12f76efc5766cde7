import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { addUser, signIn, type Browser } from './helpers.ts';

/** Finding a payment: by its id, by its whole order id, by the start of an order id; "succeeded" includes settled. */
describe('dashboard payments search and filters', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let owner: Browser;
  const ids = new Map<string, string>();

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Search Shop');
    await addUser(t, merchant.id, 'owner@search.example', 'owner');
    owner = await signIn(t, 'owner@search.example');
    assert.equal((await owner.post('/dashboard/mode', { mode: 'sandbox' })).statusCode, 303);
    for (const [order_id, scenario] of [
      ['shop-1001', 'matched_then_completed'],
      ['shop-1002', 'settlement_cycle'],
      ['other-1', 'expired'],
    ] as const) {
      const response = await owner.post('/dashboard/payments/simulate', {
        scenario,
        amount: '100.00',
        currency: 'THB',
        order_id,
      });
      assert.equal(response.statusCode, 303, response.body.slice(0, 300));
      ids.set(order_id, decodeURIComponent(String(response.headers.location).split('/').pop()!.split('?')[0]!));
    }
  });
  after(() => t.close());

  const listed = (body: string) =>
    [...body.matchAll(/<td data-label="[^"]*"><a href="\/dashboard\/payments\/[^"]+">([^<]+)<\/a><\/td>/g)]
      .map((match) => match[1])
      .sort();

  it('an order id prefix lists the payments whose order id starts with it, and only those', async () => {
    const response = await owner.get('/dashboard/payments?q=shop-10');
    assert.equal(response.statusCode, 200, response.body.slice(0, 300));
    assert.deepEqual(listed(response.body), ['shop-1001', 'shop-1002']);
    assert.match(response.body, /id="q" name="q" value="shop-10"/, 'the search box keeps the text');
  });

  it('a whole order id or a payment id opens the payment', async () => {
    const by_order = await owner.get('/dashboard/payments?q=shop-1001');
    assert.equal(by_order.statusCode, 303);
    assert.equal(by_order.headers.location, `/dashboard/payments/${ids.get('shop-1001')}`);
    const by_id = await owner.get(`/dashboard/payments?q=${ids.get('other-1')}`);
    assert.equal(by_id.statusCode, 303);
    assert.equal(by_id.headers.location, `/dashboard/payments/${ids.get('other-1')}`);
  });

  it('no match is a 404 that says so and keeps the text; LIKE wildcards are plain characters', async () => {
    for (const q of ['nothing-here', 'shop%', '_hop', `sbx_00000000-0000-4000-8000-000000000000`]) {
      const response = await owner.get(`/dashboard/payments?q=${encodeURIComponent(q)}`);
      assert.equal(response.statusCode, 404, `${q}: ${response.body.slice(0, 200)}`);
      assert.match(response.body, /id="error-message"/);
    }
  });

  it('"succeeded" includes settled payments; "completed" alone does not', async () => {
    const statuses = await t.db
      .selectFrom('payments')
      .select(['order_id', 'status'])
      .where('merchant_id', '=', merchant.id)
      .execute();
    const status_of = Object.fromEntries(statuses.map((row) => [row.order_id, row.status]));
    assert.equal(status_of['shop-1002'], 'settled');
    assert.equal(status_of['shop-1001'], 'completed');
    assert.deepEqual(listed((await owner.get('/dashboard/payments?status=succeeded')).body), [
      'shop-1001',
      'shop-1002',
    ]);
    assert.deepEqual(listed((await owner.get('/dashboard/payments?status=completed')).body), ['shop-1001']);
    const csv = (await owner.get('/dashboard/payments/export.csv?status=succeeded&q=shop')).body;
    assert.equal(csv.trim().split('\r\n').length, 3, csv);
  });
});
