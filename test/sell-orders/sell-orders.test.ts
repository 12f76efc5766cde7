import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createSellOrder } from '../../src/modules/sell-orders/service.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import {
  balancesOf,
  createSell,
  eventTypes,
  expectError,
  fund,
  merchantCall,
  MINT_SOURCE,
  PAY,
  sellBody,
} from '../helpers/orders.ts';

describe('sell orders: create, read, list, cancel', () => {
  let t: TestApp;
  let a: TestMerchant;
  let b: TestMerchant;

  before(async () => {
    t = await startTestApp({ env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE } });
    a = await t.createMerchant('Seller A');
    b = await t.createMerchant('Seller B');
    await fund(t, a.id, 1_000 * PAY);
  });
  after(() => t.close());

  it('creates a pending sell order and moves its PAY from available to reserve', async () => {
    const before_balances = await balancesOf(t, a.id);
    const response = await merchantCall(t, a.jwt, 'POST', '/v1/merchant-sell-orders', sellBody(5 * PAY, 'THB', 17_500));
    assert.equal(response.statusCode, 201, response.body);
    const order = response.json().data;
    assert.equal(order.status, 'pending');
    assert.equal(order.merchant_id, a.id);
    assert.equal(order.amount_micro_pay, 5 * PAY);
    assert.equal(order.currency, 'PAY');
    assert.equal(order.target_currency, 'THB');
    assert.equal(order.target_fiat_amount, 17_500);
    assert.equal(order.matched_buy_order_id, null);
    assert.equal(order.cash_leg_attempts, 0);
    assert.equal(order.failure_reason, null);
    assert.equal(order.is_sandbox, false);
    // expires_at = creation + SELL_ORDER_PENDING_TTL_HOURS (24 by default)
    assert.equal(new Date(order.expires_at).getTime() - new Date(order.created_at).getTime(), 24 * 3600_000);
    const after_balances = await balancesOf(t, a.id);
    assert.equal(after_balances.available, before_balances.available - 5 * PAY);
    assert.equal(after_balances.reserve, before_balances.reserve + 5 * PAY);
  });

  it('rejects invalid bodies with 400 and keeps nothing', async () => {
    const count = async () =>
      Number(
        (
          await t.db
            .selectFrom('sell_orders')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const rows_before = await count();
    const bad: unknown[] = [
      {},
      { ...sellBody(), amount_micro_pay: 0 },
      { ...sellBody(), amount_micro_pay: -5 },
      { ...sellBody(), amount_micro_pay: 1.5 },
      { ...sellBody(), currency: 'THB' },
      { ...sellBody(), target_currency: 'PAY' },
      { ...sellBody(), target_currency: 'EUR' },
      { ...sellBody(), target_fiat_amount: 0 },
      { amount_micro_pay: PAY, currency: 'PAY', target_currency: 'THB' },
      { ...sellBody(), extra: true },
    ];
    for (const body of bad)
      expectError(await merchantCall(t, a.jwt, 'POST', '/v1/merchant-sell-orders', body), 400, 'VALIDATION_ERROR');
    assert.equal(await count(), rows_before);
  });

  it('requires a UUID Idempotency-Key; replays the same body; 409 on another body', async () => {
    expectError(
      await merchantCall(t, a.jwt, 'POST', '/v1/merchant-sell-orders', sellBody(), null),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await merchantCall(t, a.jwt, 'POST', '/v1/merchant-sell-orders', sellBody(), 'not-a-uuid'),
      400,
      'VALIDATION_ERROR',
    );
    const key = randomUUID();
    const before_balances = await balancesOf(t, a.id);
    const first = await merchantCall(t, a.jwt, 'POST', '/v1/merchant-sell-orders', sellBody(2 * PAY), key);
    assert.equal(first.statusCode, 201);
    const again = await merchantCall(t, a.jwt, 'POST', '/v1/merchant-sell-orders', sellBody(2 * PAY), key);
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.json().data.id, first.json().data.id);
    expectError(
      await merchantCall(t, a.jwt, 'POST', '/v1/merchant-sell-orders', sellBody(3 * PAY), key),
      409,
      'IDEMPOTENCY_KEY_CONFLICT',
    );
    // Reserved once only.
    assert.equal((await balancesOf(t, a.id)).reserve, before_balances.reserve + 2 * PAY);
    // Concurrent duplicates of one key: one row.
    const key2 = randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => merchantCall(t, a.jwt, 'POST', '/v1/merchant-sell-orders', sellBody(PAY), key2)),
    );
    assert.deepEqual(new Set(responses.map((r) => r.statusCode)), new Set([201]));
    assert.equal(new Set(responses.map((r) => r.json().data.id)).size, 1);
  });

  it('409 SELL_ORDER_INSUFFICIENT_BALANCE when available is short; nothing kept', async () => {
    const { available } = await balancesOf(t, a.id);
    const rows_before = (await t.db.selectFrom('sell_orders').select('id').where('merchant_id', '=', a.id).execute())
      .length;
    expectError(
      await merchantCall(t, a.jwt, 'POST', '/v1/merchant-sell-orders', sellBody(available + 1)),
      409,
      'SELL_ORDER_INSUFFICIENT_BALANCE',
    );
    expectError(
      await merchantCall(t, b.jwt, 'POST', '/v1/merchant-sell-orders', sellBody(1)),
      409,
      'SELL_ORDER_INSUFFICIENT_BALANCE',
    );
    assert.equal(
      (await t.db.selectFrom('sell_orders').select('id').where('merchant_id', '=', a.id).execute()).length,
      rows_before,
    );
    assert.equal((await balancesOf(t, a.id)).available, available);
  });

  it('50 concurrent creates never overdraw: exactly floor(available / amount) succeed', async () => {
    const c = await t.createMerchant('Concurrent');
    await fund(t, c.id, 17 * PAY);
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => merchantCall(t, c.jwt, 'POST', '/v1/merchant-sell-orders', sellBody(PAY))),
    );
    const created = responses.filter((r) => r.statusCode === 201);
    const refused = responses.filter((r) => r.statusCode === 409);
    assert.equal(created.length, 17);
    assert.equal(refused.length, 33);
    for (const r of refused) assert.equal(r.json().error.code, 'SELL_ORDER_INSUFFICIENT_BALANCE');
    assert.deepEqual(await balancesOf(t, c.id), { available: 0, reserve: 17 * PAY });
    const verification = await t.application.ledger.verify();
    assert.equal(verification.ok, true, verification.problems.join('; '));
  });

  it('GET: own order 200; another merchant 403 SELL_ORDER_NOT_OWNER; unknown 404; bad id 400; no credential 401', async () => {
    const order = await createSell(t, a.jwt, sellBody(PAY));
    const own = await merchantCall(t, a.jwt, 'GET', `/v1/merchant-sell-orders/${order.id}`);
    assert.equal(own.statusCode, 200);
    assert.equal(own.json().data.id, order.id);
    expectError(
      await merchantCall(t, b.jwt, 'GET', `/v1/merchant-sell-orders/${order.id}`),
      403,
      'SELL_ORDER_NOT_OWNER',
    );
    expectError(await merchantCall(t, a.jwt, 'GET', `/v1/merchant-sell-orders/${randomUUID()}`), 404, 'NOT_FOUND');
    expectError(await merchantCall(t, a.jwt, 'GET', '/v1/merchant-sell-orders/nope'), 400, 'VALIDATION_ERROR');
    expectError(await merchantCall(t, null, 'GET', `/v1/merchant-sell-orders/${order.id}`), 401, 'UNAUTHORIZED');
    expectError(
      await merchantCall(t, 'garbage.jwt.token', 'GET', `/v1/merchant-sell-orders/${order.id}`),
      401,
      'UNAUTHORIZED',
    );
    // An API key is not a merchant identity on these routes.
    expectError(await t.call('GET', `/v1/merchant-sell-orders/${order.id}`, a.live), 401, 'UNAUTHORIZED');
    expectError(await merchantCall(t, null, 'POST', '/v1/merchant-sell-orders', sellBody()), 401, 'UNAUTHORIZED');
  });

  it('the dashboard session cookie is accepted like the JWT', async () => {
    const session = await t.admin('POST', `/admin/merchants/${a.id}/sessions`, { user_id: 'dash-user' });
    assert.equal(session.statusCode, 201, session.body);
    const response = await t.request({
      method: 'GET',
      url: '/v1/merchant-sell-orders',
      headers: { cookie: `mpay_session=${session.json().data.session_token}` },
    });
    assert.equal(response.statusCode, 200, response.body);
  });

  it('lists newest first with status, currency, target_currency and date filters, cursor pagination and limit bounds', async () => {
    const m = await t.createMerchant('Lister');
    await fund(t, m.id, 100 * PAY);
    const ids: string[] = [];
    for (const [i, currency] of ['THB', 'AUD', 'THB', 'USD', 'THB'].entries()) {
      t.clock.advance(1000);
      ids.push((await createSell(t, m.jwt, sellBody((i + 1) * PAY, currency))).id);
    }
    const cancelled = ids[1]!;
    assert.equal(
      (await merchantCall(t, m.jwt, 'POST', `/v1/merchant-sell-orders/${cancelled}/cancel`)).statusCode,
      200,
    );

    const all = await merchantCall(t, m.jwt, 'GET', '/v1/merchant-sell-orders');
    assert.equal(all.statusCode, 200);
    assert.deepEqual(
      all.json().data.map((o: { id: string }) => o.id),
      [...ids].reverse(),
    );
    assert.equal(all.json().has_more, false);
    assert.equal(all.json().next_cursor, null);

    const thb = await merchantCall(t, m.jwt, 'GET', '/v1/merchant-sell-orders?target_currency=THB');
    assert.deepEqual(
      thb.json().data.map((o: { id: string }) => o.id),
      [ids[4], ids[2], ids[0]],
    );
    const failed = await merchantCall(t, m.jwt, 'GET', '/v1/merchant-sell-orders?status=failed');
    assert.deepEqual(
      failed.json().data.map((o: { id: string }) => o.id),
      [cancelled],
    );
    const multi = await merchantCall(t, m.jwt, 'GET', '/v1/merchant-sell-orders?status=pending,failed&currency=PAY');
    assert.equal(multi.json().data.length, 5);
    const created_at = (i: number) => all.json().data.find((o: { id: string }) => o.id === ids[i]).created_at as string;
    const window = await merchantCall(
      t,
      m.jwt,
      'GET',
      `/v1/merchant-sell-orders?created_after=${encodeURIComponent(created_at(1))}&created_before=${encodeURIComponent(created_at(3))}`,
    );
    assert.deepEqual(
      window.json().data.map((o: { id: string }) => o.id),
      [ids[2], ids[1]],
    );

    const page1 = await merchantCall(t, m.jwt, 'GET', '/v1/merchant-sell-orders?limit=2');
    assert.equal(page1.json().has_more, true);
    const page2 = await merchantCall(
      t,
      m.jwt,
      'GET',
      `/v1/merchant-sell-orders?limit=2&cursor=${page1.json().next_cursor}`,
    );
    const page3 = await merchantCall(
      t,
      m.jwt,
      'GET',
      `/v1/merchant-sell-orders?limit=2&cursor=${page2.json().next_cursor}`,
    );
    assert.deepEqual(
      [...page1.json().data, ...page2.json().data, ...page3.json().data].map((o: { id: string }) => o.id),
      [...ids].reverse(),
    );
    assert.equal(page3.json().has_more, false);

    for (const query of [
      'limit=0',
      'limit=101',
      'limit=x',
      'status=disputed',
      'status=',
      'target_currency=EUR',
      'currency=THB',
      'created_after=yesterday',
      'cursor=%%%',
    ]) {
      expectError(await merchantCall(t, m.jwt, 'GET', `/v1/merchant-sell-orders?${query}`), 400, 'VALIDATION_ERROR');
    }
    // Other merchants' orders never appear.
    const others = await merchantCall(t, b.jwt, 'GET', '/v1/merchant-sell-orders');
    assert.equal(others.json().data.length, 0);
    const hundred = await merchantCall(t, m.jwt, 'GET', '/v1/merchant-sell-orders?limit=100');
    assert.equal(hundred.statusCode, 200);
  });

  it('cancel: pending -> failed/cancelled_by_merchant, reserve released, sell_order.failed; refused otherwise', async () => {
    const order = await createSell(t, a.jwt, sellBody(4 * PAY));
    const before_balances = await balancesOf(t, a.id);
    expectError(
      await merchantCall(t, b.jwt, 'POST', `/v1/merchant-sell-orders/${order.id}/cancel`),
      403,
      'SELL_ORDER_NOT_OWNER',
    );
    expectError(
      await merchantCall(t, a.jwt, 'POST', `/v1/merchant-sell-orders/${randomUUID()}/cancel`),
      404,
      'NOT_FOUND',
    );
    expectError(
      await merchantCall(t, a.jwt, 'POST', `/v1/merchant-sell-orders/${order.id}/cancel`, undefined, null),
      400,
      'VALIDATION_ERROR',
    );
    const key = randomUUID();
    const cancelled = await merchantCall(
      t,
      a.jwt,
      'POST',
      `/v1/merchant-sell-orders/${order.id}/cancel`,
      undefined,
      key,
    );
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.equal(cancelled.json().data.status, 'failed');
    assert.equal(cancelled.json().data.failure_reason, 'cancelled_by_merchant');
    const replay = await merchantCall(t, a.jwt, 'POST', `/v1/merchant-sell-orders/${order.id}/cancel`, undefined, key);
    assert.equal(replay.statusCode, 200);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    const after_balances = await balancesOf(t, a.id);
    assert.equal(after_balances.available, before_balances.available + 4 * PAY);
    assert.equal(after_balances.reserve, before_balances.reserve - 4 * PAY);
    assert.deepEqual(await eventTypes(t, order.id), ['sell_order.failed']);
    expectError(
      await merchantCall(t, a.jwt, 'POST', `/v1/merchant-sell-orders/${order.id}/cancel`),
      409,
      'SELL_ORDER_BAD_STATE',
    );
  });

  it('concurrent cancels of one order: one 200, the rest 409, the reserve released once', async () => {
    const order = await createSell(t, a.jwt, sellBody(3 * PAY));
    const before_balances = await balancesOf(t, a.id);
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => merchantCall(t, a.jwt, 'POST', `/v1/merchant-sell-orders/${order.id}/cancel`)),
    );
    assert.equal(responses.filter((r) => r.statusCode === 200).length, 1);
    assert.equal(
      responses.filter((r) => r.statusCode === 409 && r.json().error.code === 'SELL_ORDER_BAD_STATE').length,
      9,
    );
    assert.equal((await balancesOf(t, a.id)).available, before_balances.available + 3 * PAY);
  });

  it('sandbox rows are invisible to the live merchant identity and use sandbox accounts only', async () => {
    await fund(t, a.id, 10 * PAY, true);
    const view = await t.db.transaction().execute((trx) =>
      createSellOrder(
        t.application.payouts.sell_orders,
        trx,
        { merchant_id: a.id, is_sandbox: true },
        {
          amount_micro_pay: 2 * PAY,
          currency: 'PAY',
          target_currency: 'THB',
          target_fiat_amount: 100,
          payout_destination: { rail: 'promptpay' as const, promptpay_id: '0812345678' },
        },
      ),
    );
    assert.equal(view.is_sandbox, true);
    expectError(await merchantCall(t, a.jwt, 'GET', `/v1/merchant-sell-orders/${view.id}`), 404, 'NOT_FOUND');
    const listed = await merchantCall(t, a.jwt, 'GET', '/v1/merchant-sell-orders?limit=100');
    assert.ok(!listed.json().data.some((o: { id: string }) => o.id === view.id));
    assert.deepEqual(await balancesOf(t, a.id, true), { available: 8 * PAY, reserve: 2 * PAY });
  });
});
