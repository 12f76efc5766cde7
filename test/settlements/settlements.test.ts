import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { allOperationsDocument, startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { completedPayments, usdSeller } from '../helpers/payments.ts';

/**
 * Merchant settlement routes: batch arithmetic (fee 150 bps per payment, rounded down in the merchant's favour),
 * grouping per currency and mode, the CSV export, pagination, and who may see what.
 */
describe('settlements: batches and merchant routes', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let other: TestMerchant;
  let thb_ids: string[];
  let sandbox_ids: string[];
  let thb_batch: Record<string, any>;
  let usd_batch: Record<string, any>;
  let sandbox_batch: Record<string, any>;

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Shop');
    other = await t.createMerchant('Other shop');
    await t.createSeller(thbSeller(100_000_000));
    await t.createSeller(usdSeller());
    // 10000 * 1.5% = 150 exactly; 333 -> 4.995 -> 4; 1 -> 0.015 -> 0; 12345 -> 185.175 -> 185; "=SUM(A1)" tests the CSV guard
    thb_ids = [];
    for (const [order_id, amount] of [
      ['o-100', 10000],
      ['o-333', 333],
      ['o-1', 1],
      ['=SUM(A1),"x"', 12345],
    ] as const) {
      t.clock.advance(1000);
      thb_ids.push(...(await completedPayments(t, merchant.live, [{ order_id, amount }])));
    }
    await completedPayments(t, merchant.live, [{ order_id: 'u-1', amount: 999, currency: 'USD' }]);
    sandbox_ids = await completedPayments(t, merchant.sandbox, [{ order_id: 's-1', amount: 5000 }]);
    await completedPayments(t, other.live, [{ order_id: 'x-1', amount: 777 }]);
    t.clock.advance(60_000);

    const run = await t.admin('POST', '/admin/settlements/run');
    assert.equal(run.statusCode, 200, run.body);
    const batches = run.json().data.batches as Record<string, any>[];
    assert.equal(batches.length, 4, 'one batch per merchant, mode and currency');
    assert.equal(run.json().data.payment_count, 4 + 1 + 1 + 1);
    const mine = batches.filter((batch) => batch.merchant_id === merchant.id);
    thb_batch = mine.find((batch) => batch.currency === 'THB' && !batch.is_sandbox)!;
    usd_batch = mine.find((batch) => batch.currency === 'USD')!;
    sandbox_batch = mine.find((batch) => batch.is_sandbox)!;
    assert.ok(thb_batch && usd_batch && sandbox_batch);
  });
  after(() => t.close());

  it('computes gross, per-payment fees rounded down, and net exactly', () => {
    assert.equal(thb_batch.status, 'completed');
    assert.equal(thb_batch.payment_count, 4);
    assert.equal(thb_batch.fee_bps, 150);
    assert.equal(thb_batch.gross_minor, 10000 + 333 + 1 + 12345);
    assert.equal(thb_batch.fee_minor, 150 + 4 + 0 + 185);
    assert.equal(thb_batch.net_minor, 22679 - 339);
    assert.equal(thb_batch.gross_decimal, '226.79');
    assert.equal(thb_batch.fee_decimal, '3.39');
    assert.equal(thb_batch.net_decimal, '223.40');
    assert.equal(thb_batch.adjustments_minor, 0);
    // 999 * 1.5% = 14.985 -> 14
    assert.deepEqual([usd_batch.gross_minor, usd_batch.fee_minor, usd_batch.net_minor], [999, 14, 985]);
    assert.deepEqual([sandbox_batch.gross_minor, sandbox_batch.fee_minor, sandbox_batch.net_minor], [5000, 75, 4925]);
  });

  it('states the fee per payment and moves each payment to settled with its batch id', async () => {
    const page = await t.call('GET', `/v1/settlements/${thb_batch.id}/payments?limit=100`, merchant.live);
    assert.equal(page.statusCode, 200, page.body);
    const rows = page.json().data as Record<string, any>[];
    assert.equal(rows.length, 4);
    const by_amount = new Map(rows.map((row) => [row.amount_minor, row]));
    assert.deepEqual(
      [10000, 333, 1, 12345].map((amount) => [by_amount.get(amount)!.fee_minor, by_amount.get(amount)!.net_minor]),
      [
        [150, 9850],
        [4, 329],
        [0, 1],
        [185, 12160],
      ],
    );
    assert.equal(
      rows.reduce((sum, row) => sum + row.fee_minor, 0),
      thb_batch.fee_minor,
    );
    assert.equal(
      rows.reduce((sum, row) => sum + row.net_minor, 0),
      thb_batch.net_minor,
    );
    for (const id of thb_ids) {
      const payment = await t.db
        .selectFrom('payments')
        .select(['status', 'settlement_id', 'settled_at'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.equal(payment.status, 'settled');
      assert.equal(payment.settlement_id, thb_batch.id);
      assert.ok(payment.settled_at);
    }
    const read = await t.call('GET', `/v1/payments/${thb_ids[0]}`, merchant.live);
    assert.equal(read.json().data.status, 'settled');
  });

  it('records settlement.completed in the outbox for each batch, flagged sandbox in sandbox', async () => {
    const events = await t.db.selectFrom('events').selectAll().where('type', '=', 'settlement.completed').execute();
    assert.equal(events.length, 4);
    const thb = events.find((event) => event.resource_id === thb_batch.id)!;
    assert.equal(thb.resource_type, 'settlement');
    assert.equal(thb.is_sandbox, false);
    assert.equal((thb.payload as any).data.net_minor, 22340);
    assert.equal((thb.payload as any).settlement_id, thb_batch.id);
    assert.equal((thb.payload as any).sandbox, undefined);
    const sandbox = events.find((event) => event.resource_id === sandbox_batch.id)!;
    assert.equal(sandbox.is_sandbox, true);
    assert.equal((sandbox.payload as any).sandbox, true);
  });

  it('a second run finds nothing to settle', async () => {
    const run = await t.admin('POST', '/admin/settlements/run');
    assert.equal(run.statusCode, 200);
    assert.deepEqual(run.json().data, { batches: [], payment_count: 0 });
    const count = await t.db
      .selectFrom('settlements')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 4);
  });

  it('GET /v1/settlements/{id} returns the batch with its adjustments', async () => {
    const read = await t.call('GET', `/v1/settlements/${thb_batch.id}`, merchant.live);
    assert.equal(read.statusCode, 200, read.body);
    assert.deepEqual(read.json().data, { ...thb_batch, refunded_minor: 0, refunded_decimal: '0.00', adjustments: [] });
  });

  it('lists newest first with a status filter and a cursor', async () => {
    const all = await t.call('GET', '/v1/settlements', merchant.live);
    assert.equal(all.statusCode, 200);
    assert.deepEqual(new Set(all.json().data.map((batch: any) => batch.id)), new Set([thb_batch.id, usd_batch.id]));
    const first = await t.call('GET', '/v1/settlements?limit=1', merchant.live);
    assert.equal(first.json().data.length, 1);
    assert.equal(first.json().has_more, true);
    const second = await t.call('GET', `/v1/settlements?limit=1&cursor=${first.json().next_cursor}`, merchant.live);
    assert.equal(second.json().data.length, 1);
    assert.equal(second.json().has_more, false);
    assert.equal(second.json().next_cursor, null);
    assert.notEqual(second.json().data[0].id, first.json().data[0].id);
    const completed = await t.call('GET', '/v1/settlements?status=completed', merchant.live);
    assert.equal(completed.json().data.length, 2);
    const failed = await t.call('GET', '/v1/settlements?status=failed,pending', merchant.live);
    assert.deepEqual(failed.json().data, []);
  });

  it('pages the payments of a batch with a cursor', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await t.call(
        'GET',
        `/v1/settlements/${thb_batch.id}/payments?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
        merchant.live,
      );
      assert.equal(page.statusCode, 200, page.body);
      seen.push(...page.json().data.map((row: any) => row.payment_id));
      cursor = page.json().next_cursor;
    } while (cursor);
    assert.deepEqual(seen, [...thb_ids].reverse(), 'newest payment first, each once');
  });

  it('exports CSV: a header row, one line per payment, minor units and decimals, formula-safe quoting', async () => {
    const response = await t.call('GET', `/v1/settlements/${thb_batch.id}/export.csv`, merchant.live);
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/csv/);
    assert.equal(response.headers['content-disposition'], `attachment; filename="settlement-${thb_batch.id}.csv"`);
    const lines = response.body.split('\r\n');
    assert.equal(lines.pop(), '', 'ends with CRLF');
    assert.equal(
      lines[0],
      'payment_id,order_id,currency,amount_minor,amount,fee_minor,fee,net_minor,net,payment_created_at,completed_at,fee_micro_pay,refunded_minor,refunded',
    );
    assert.equal(lines.length, 1 + 4);
    assert.ok(lines[1]!.startsWith(`${thb_ids[0]},o-100,THB,10000,100.00,150,1.50,9850,98.50,`), lines[1]);
    assert.ok(lines[2]!.startsWith(`${thb_ids[1]},o-333,THB,333,3.33,4,0.04,329,3.29,`), lines[2]);
    assert.ok(lines[3]!.startsWith(`${thb_ids[2]},o-1,THB,1,0.01,0,0.00,1,0.01,`), lines[3]);
    assert.ok(
      lines[4]!.startsWith(`${thb_ids[3]},"'=SUM(A1),""x""",THB,12345,123.45,185,1.85,12160,121.60,`),
      lines[4],
    );
  });

  it('separates modes: a sandbox key sees only the sandbox batch, a live key never sees it', async () => {
    const sandbox_list = await t.call('GET', '/v1/settlements', merchant.sandbox);
    assert.deepEqual(
      sandbox_list.json().data.map((batch: any) => batch.id),
      [sandbox_batch.id],
    );
    const test_list = await t.call('GET', '/v1/settlements', merchant.test);
    assert.deepEqual(
      test_list.json().data.map((batch: any) => batch.id),
      [sandbox_batch.id],
    );
    assert.equal(
      (await t.call('GET', `/v1/settlements/${sandbox_batch.id}`, merchant.sandbox)).json().data.payment_count,
      1,
    );
    for (const url of [
      `/v1/settlements/${sandbox_batch.id}`,
      `/v1/settlements/${sandbox_batch.id}/payments`,
      `/v1/settlements/${sandbox_batch.id}/export.csv`,
    ]) {
      const response = await t.call('GET', url, merchant.live);
      assert.equal(response.statusCode, 404, url);
      assert.equal(response.json().error.code, 'NOT_FOUND');
    }
    const live_from_sandbox = await t.call('GET', `/v1/settlements/${thb_batch.id}`, merchant.sandbox);
    assert.equal(live_from_sandbox.statusCode, 404);
    const sandbox_rows = await t.call('GET', `/v1/settlements/${sandbox_batch.id}/payments`, merchant.sandbox);
    assert.deepEqual(
      sandbox_rows.json().data.map((row: any) => row.payment_id),
      sandbox_ids,
    );
  });

  it("another merchant gets 404 on this merchant's batch and sees only its own", async () => {
    for (const url of [
      `/v1/settlements/${thb_batch.id}`,
      `/v1/settlements/${thb_batch.id}/payments`,
      `/v1/settlements/${thb_batch.id}/export.csv`,
    ]) {
      const response = await t.call('GET', url, other.live);
      assert.equal(response.statusCode, 404, url);
      assert.equal(response.json().error.code, 'NOT_FOUND');
    }
    const list = await t.call('GET', '/v1/settlements', other.live);
    assert.equal(list.json().data.length, 1);
    assert.equal(list.json().data[0].gross_minor, 777);
    assert.equal(list.json().data[0].merchant_id, other.id);
  });

  it('answers 401 without a valid key', async () => {
    for (const url of [
      '/v1/settlements',
      `/v1/settlements/${thb_batch.id}`,
      `/v1/settlements/${thb_batch.id}/payments`,
      `/v1/settlements/${thb_batch.id}/export.csv`,
    ]) {
      for (const key of [undefined, 'svc_live_not-a-real-key-000000000000000000']) {
        const response = await t.call('GET', url, key);
        assert.equal(response.statusCode, 401, url);
        assert.equal(response.json().error.code, 'UNAUTHORIZED');
      }
    }
    // a merchant JWT is not an API key
    const jwt = await t.request({
      method: 'GET',
      url: '/v1/settlements',
      headers: { authorization: `Bearer ${merchant.jwt}` },
    });
    assert.equal(jwt.statusCode, 401);
  });

  it('answers 400 on a bad id, status, limit or cursor, and 404 on an unknown id', async () => {
    const cases: [string, number, string][] = [
      ['/v1/settlements/not-a-uuid', 400, 'VALIDATION_ERROR'],
      ['/v1/settlements/not-a-uuid/export.csv', 400, 'VALIDATION_ERROR'],
      ['/v1/settlements?status=settled', 400, 'VALIDATION_ERROR'],
      ['/v1/settlements?limit=0', 400, 'VALIDATION_ERROR'],
      ['/v1/settlements?limit=101', 400, 'VALIDATION_ERROR'],
      ['/v1/settlements?cursor=garbage', 400, 'VALIDATION_ERROR'],
      [
        `/v1/settlements?cursor=${Buffer.from(JSON.stringify(['2026-01-01T00:00:00Z', 'x'])).toString('base64url')}`,
        400,
        'VALIDATION_ERROR',
      ],
      [`/v1/settlements/${thb_batch.id}/payments?cursor=garbage`, 400, 'VALIDATION_ERROR'],
      ['/v1/settlements/00000000-0000-4000-8000-000000000000', 404, 'NOT_FOUND'],
      ['/v1/settlements/00000000-0000-4000-8000-000000000000/payments', 404, 'NOT_FOUND'],
    ];
    for (const [url, status, code] of cases) {
      const response = await t.call('GET', url, merchant.live);
      assert.equal(response.statusCode, status, `${url}: ${response.body}`);
      assert.equal(response.json().error.code, code, url);
    }
  });

  it('documents the routes in the OpenAPI document', async () => {
    const doc = await allOperationsDocument(t);
    for (const path of [
      '/v1/settlements',
      '/v1/settlements/{id}',
      '/v1/settlements/{id}/payments',
      '/v1/settlements/{id}/export.csv',
      '/admin/settlements/{id}/retry',
      '/admin/settlements/{id}/adjustments',
    ]) {
      assert.ok(doc.paths[path], path);
    }
  });
});
