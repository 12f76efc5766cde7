import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { accounts } from '../../src/modules/ledger/port.ts';
import { sweepSellOrders } from '../../src/modules/sell-orders/close.ts';
import { ADMIN_HEADERS, startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import {
  balancesOf,
  createSell,
  expectError,
  fund,
  inFlightSell,
  merchantCall,
  MINT_SOURCE,
  PAY,
  receipt,
  scriptedValidator,
  sellBody,
} from '../helpers/orders.ts';

describe('disputes', () => {
  let t: TestApp;
  let a: TestMerchant;
  let b: TestMerchant;
  let buyer: TestMerchant;
  const validator = scriptedValidator();

  before(async () => {
    t = await startTestApp({
      env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE, CASH_LEG_RETRY_MAX: '1' },
      overrides: { validator },
    });
    a = await t.createMerchant('A');
    b = await t.createMerchant('B');
    buyer = await t.createMerchant('Buyer');
    await fund(t, a.id, 1_000 * PAY);
    await fund(t, b.id, 1_000 * PAY);
  });
  after(() => t.close());

  const open = (jwt: string, body: unknown, key: string | null = randomUUID()) =>
    merchantCall(t, jwt, 'POST', '/v1/merchant-disputes', body, key);
  const admin = (
    method: 'GET' | 'POST',
    url: string,
    body?: unknown,
    headers: Record<string, string> = ADMIN_HEADERS,
  ) => t.request({ method, url, headers, ...(body === undefined ? {} : { payload: body as object }) });
  async function completedSell(jwt: string, amount = 5 * PAY) {
    const sell = await inFlightSell(t, jwt, buyer.jwt, amount);
    const done = await merchantCall(t, jwt, 'POST', `/v1/merchant-sell-orders/${sell.id}/confirm-cash-leg`, {
      receipt_base64: receipt(),
      content_type: 'image/png',
    });
    assert.equal(done.json().data.status, 'completed', done.body);
    return sell;
  }
  async function failedMatchedSell(jwt: string, amount = 5 * PAY) {
    const sell = await inFlightSell(t, jwt, buyer.jwt, amount);
    validator.next.push('failed');
    await merchantCall(t, jwt, 'POST', `/v1/merchant-sell-orders/${sell.id}/confirm-cash-leg`, {
      receipt_base64: receipt(),
      content_type: 'image/png',
    });
    await sweepSellOrders(t.application.payouts.sell_orders);
    assert.equal(
      (await merchantCall(t, jwt, 'GET', `/v1/merchant-sell-orders/${sell.id}`)).json().data.failure_reason,
      'cash_leg_retry_exhausted',
    );
    return sell;
  }
  const webhooks = async (dispute_id: string) =>
    (
      await t.db
        .selectFrom('events')
        .select(['type', 'payload'])
        .where('resource_id', '=', dispute_id)
        .orderBy('seq')
        .execute()
    ).map((e) => ({ type: e.type, actor: (e.payload as { data: { actor_user_id: string } }).data.actor_user_id }));

  it('opens a merchant_dispute (status opened, gateway.dispute.opened, event log with actor, no ledger operation)', async () => {
    const sell = await createSell(t, a.jwt, sellBody(PAY, 'USD'));
    const transfers_before = (await t.db.selectFrom('ledger_transfers').select('id').execute()).length;
    const response = await open(a.jwt, { sell_order_id: sell.id, notes: 'Buyer says the payout never arrived' });
    assert.equal(response.statusCode, 201, response.body);
    const dispute = response.json().data;
    assert.equal(dispute.kind, 'merchant_dispute');
    assert.equal(dispute.status, 'opened');
    assert.equal(dispute.sell_order_id, sell.id);
    assert.equal(dispute.merchant_id, a.id);
    assert.equal(dispute.resolution, null);
    assert.equal((await t.db.selectFrom('ledger_transfers').select('id').execute()).length, transfers_before);
    const detail = await merchantCall(t, a.jwt, 'GET', `/v1/merchant-disputes/${dispute.id}`);
    assert.equal(detail.statusCode, 200);
    assert.equal(detail.json().data.events.length, 1);
    assert.equal(detail.json().data.events[0].action, 'opened');
    assert.equal(detail.json().data.events[0].to_status, 'opened');
    assert.ok(detail.json().data.events[0].actor_user_id);
    assert.deepEqual(
      (await webhooks(dispute.id)).map((w) => w.type),
      ['gateway.dispute.opened'],
    );
    // One unresolved dispute per sell order.
    expectError(await open(a.jwt, { sell_order_id: sell.id, notes: 'again' }), 409, 'DISPUTE_BAD_STATE');
  });

  it('400 for a missing or malformed sell_order_id and notes outside 1..4000; 403 cross-merchant; 404 unknown; 401', async () => {
    const sell = await createSell(t, a.jwt, sellBody(PAY, 'USD'));
    const count = async () => (await t.db.selectFrom('disputes').select('id').execute()).length;
    const before_count = await count();
    for (const body of [
      { notes: 'x' },
      { sell_order_id: 'nope', notes: 'x' },
      { sell_order_id: sell.id },
      { sell_order_id: sell.id, notes: '' },
      { sell_order_id: sell.id, notes: 'x'.repeat(4001) },
      { sell_order_id: sell.id, notes: 'x', kind: 'chargeback' },
    ]) {
      expectError(await open(a.jwt, body), 400, 'VALIDATION_ERROR');
    }
    expectError(await open(a.jwt, { sell_order_id: sell.id, notes: 'x' }, null), 400, 'VALIDATION_ERROR');
    expectError(
      await open(b.jwt, { sell_order_id: sell.id, notes: 'not mine' }),
      403,
      'GATEWAY_DISPUTE_CROSS_MERCHANT',
    );
    expectError(await open(a.jwt, { sell_order_id: randomUUID(), notes: 'ghost' }), 404, 'NOT_FOUND');
    expectError(await open(null as unknown as string, { sell_order_id: sell.id, notes: 'x' }), 401, 'UNAUTHORIZED');
    assert.equal(await count(), before_count);
    const max = await open(a.jwt, { sell_order_id: sell.id, notes: 'x'.repeat(4000) });
    assert.equal(max.statusCode, 201);
    expectError(
      await merchantCall(t, b.jwt, 'GET', `/v1/merchant-disputes/${max.json().data.id}`),
      403,
      'GATEWAY_DISPUTE_CROSS_MERCHANT',
    );
    expectError(await merchantCall(t, a.jwt, 'GET', `/v1/merchant-disputes/${randomUUID()}`), 404, 'NOT_FOUND');
  });

  it('idempotency: same key + body replays the same dispute; another body is 409; concurrent duplicates make one row', async () => {
    const sell = await createSell(t, a.jwt, sellBody(PAY, 'USD'));
    const key = randomUUID();
    const body = { sell_order_id: sell.id, notes: 'first' };
    const responses = await Promise.all(Array.from({ length: 6 }, () => open(a.jwt, body, key)));
    assert.ok(responses.every((r) => r.statusCode === 201));
    assert.equal(new Set(responses.map((r) => r.json().data.id)).size, 1);
    assert.equal(responses.filter((r) => r.headers['idempotent-replayed'] === 'true').length, 5);
    expectError(await open(a.jwt, { ...body, notes: 'second' }, key), 409, 'IDEMPOTENCY_KEY_CONFLICT');
    assert.equal(
      (await t.db.selectFrom('disputes').select('id').where('sell_order_id', '=', sell.id).execute()).length,
      1,
    );
  });

  it('lists own disputes with status and kind filters, pagination and limit bounds', async () => {
    const m = await t.createMerchant('Lister');
    await fund(t, m.id, 100 * PAY);
    const ids = [];
    for (let i = 0; i < 3; i++) {
      t.clock.advance(1000);
      const sell = await createSell(t, m.jwt, sellBody(PAY, 'USD'));
      ids.push((await open(m.jwt, { sell_order_id: sell.id, notes: `n${i}` })).json().data.id as string);
    }
    await admin('POST', `/admin/disputes/${ids[0]}/investigate`, {});
    const all = await merchantCall(t, m.jwt, 'GET', '/v1/merchant-disputes');
    assert.deepEqual(
      all.json().data.map((d: { id: string }) => d.id),
      [...ids].reverse(),
    );
    const investigating = await merchantCall(t, m.jwt, 'GET', '/v1/merchant-disputes?status=investigating,resolved');
    assert.deepEqual(
      investigating.json().data.map((d: { id: string }) => d.id),
      [ids[0]],
    );
    assert.equal(
      (await merchantCall(t, m.jwt, 'GET', '/v1/merchant-disputes?kind=merchant_dispute')).json().data.length,
      3,
    );
    assert.equal(
      (await merchantCall(t, m.jwt, 'GET', '/v1/merchant-disputes?kind=chargeback,cash_leg_failure')).json().data
        .length,
      0,
    );
    const page = await merchantCall(t, m.jwt, 'GET', '/v1/merchant-disputes?limit=2');
    assert.equal(page.json().has_more, true);
    const rest = await merchantCall(t, m.jwt, 'GET', `/v1/merchant-disputes?limit=2&cursor=${page.json().next_cursor}`);
    assert.deepEqual(
      rest.json().data.map((d: { id: string }) => d.id),
      [ids[0]],
    );
    for (const q of ['limit=0', 'limit=101', 'status=closed', 'kind=fraud'])
      expectError(await merchantCall(t, m.jwt, 'GET', `/v1/merchant-disputes?${q}`), 400, 'VALIDATION_ERROR');
    assert.ok(
      (await merchantCall(t, a.jwt, 'GET', '/v1/merchant-disputes?limit=100'))
        .json()
        .data.every((d: { merchant_id: string }) => d.merchant_id === a.id),
    );
    expectError(await merchantCall(t, null, 'GET', '/v1/merchant-disputes'), 401, 'UNAUTHORIZED');
  });

  it('admin: auth (401 / 403 ADMIN_FORBIDDEN), list with filters, detail, 404', async () => {
    expectError(await admin('GET', '/admin/disputes', undefined, {}), 401, 'UNAUTHORIZED');
    expectError(
      await admin('GET', '/admin/disputes', undefined, { authorization: 'Bearer wrong-token-0123456789' }),
      401,
      'UNAUTHORIZED',
    );
    expectError(
      await admin('GET', '/admin/disputes', undefined, { ...ADMIN_HEADERS, 'x-actor-role': 'support' }),
      403,
      'ADMIN_FORBIDDEN',
    );
    expectError(await merchantCall(t, a.jwt, 'GET', '/admin/disputes'), 401, 'UNAUTHORIZED');
    const list = await admin('GET', `/admin/disputes?merchant_id=${a.id}&status=opened&kind=merchant_dispute`);
    assert.equal(list.statusCode, 200);
    assert.ok(list.json().data.length >= 1);
    assert.ok(
      list
        .json()
        .data.every((d: { merchant_id: string; status: string }) => d.merchant_id === a.id && d.status === 'opened'),
    );
    const detail = await admin('GET', `/admin/disputes/${list.json().data[0].id}`);
    assert.equal(detail.statusCode, 200);
    assert.ok(Array.isArray(detail.json().data.events));
    expectError(await admin('GET', `/admin/disputes/${randomUUID()}`), 404, 'NOT_FOUND');
    expectError(await admin('POST', `/admin/disputes/${randomUUID()}/investigate`, {}), 404, 'NOT_FOUND');
    expectError(
      await admin(
        'POST',
        `/admin/disputes/${list.json().data[0].id}/investigate`,
        {},
        { ...ADMIN_HEADERS, 'x-actor-role': 'viewer' },
      ),
      403,
      'ADMIN_FORBIDDEN',
    );
  });

  it('every transition allowed and refused: opened -> investigating -> escalated -> resolved, with actor_user_id on every event', async () => {
    const sell = await createSell(t, a.jwt, sellBody(PAY, 'USD'));
    const id = (await open(a.jwt, { sell_order_id: sell.id, notes: 'walk the machine' })).json().data.id as string;
    expectError(await admin('POST', `/admin/disputes/${id}/escalate`, {}), 409, 'DISPUTE_BAD_STATE');
    expectError(
      await admin('POST', `/admin/disputes/${id}/resolve`, { outcome: 'no_action' }),
      409,
      'DISPUTE_BAD_STATE',
    );
    const investigating = await admin('POST', `/admin/disputes/${id}/investigate`, { notes: 'looking' });
    assert.equal(investigating.statusCode, 200, investigating.body);
    assert.equal(investigating.json().data.status, 'investigating');
    expectError(await admin('POST', `/admin/disputes/${id}/investigate`, {}), 409, 'DISPUTE_BAD_STATE');
    const escalated = await t.request({
      method: 'POST',
      url: `/admin/disputes/${id}/escalate`,
      headers: { ...ADMIN_HEADERS, 'x-actor-user-id': 'ops-2' },
      payload: { notes: 'needs legal' },
    });
    assert.equal(escalated.json().data.status, 'escalated');
    expectError(await admin('POST', `/admin/disputes/${id}/escalate`, {}), 409, 'DISPUTE_BAD_STATE');
    expectError(await admin('POST', `/admin/disputes/${id}/investigate`, {}), 409, 'DISPUTE_BAD_STATE');
    expectError(await admin('POST', `/admin/disputes/${id}/resolve`, { outcome: 'maybe' }), 400, 'VALIDATION_ERROR');
    expectError(
      await admin('POST', `/admin/disputes/${id}/resolve`, { outcome: 'no_action', notes: '' }),
      400,
      'VALIDATION_ERROR',
    );
    const resolved = await t.request({
      method: 'POST',
      url: `/admin/disputes/${id}/resolve`,
      headers: { ...ADMIN_HEADERS, 'x-actor-user-id': 'ops-3' },
      payload: { outcome: 'no_action', notes: 'closed' },
    });
    assert.equal(resolved.statusCode, 200, resolved.body);
    assert.equal(resolved.json().data.status, 'resolved');
    assert.deepEqual(resolved.json().data.resolution, {
      outcome: 'no_action',
      ledger_effect: 'none',
      amount_micro_pay: null,
      ledger_transfer_id: null,
    });
    for (const action of ['investigate', 'escalate'])
      expectError(await admin('POST', `/admin/disputes/${id}/${action}`, {}), 409, 'DISPUTE_BAD_STATE');
    expectError(
      await admin('POST', `/admin/disputes/${id}/resolve`, { outcome: 'no_action' }),
      409,
      'DISPUTE_BAD_STATE',
    );
    const events = resolved.json().data.events as {
      action: string;
      actor_user_id: string;
      from_status: string | null;
      to_status: string;
    }[];
    assert.deepEqual(
      events.map((e) => [e.action, e.from_status, e.to_status]),
      [
        ['opened', null, 'opened'],
        ['investigating', 'opened', 'investigating'],
        ['escalated', 'investigating', 'escalated'],
        ['resolved', 'escalated', 'resolved'],
      ],
    );
    assert.deepEqual(
      events.slice(1).map((e) => e.actor_user_id),
      ['ops-1', 'ops-2', 'ops-3'],
    );
    assert.deepEqual(await webhooks(id), [
      { type: 'gateway.dispute.opened', actor: events[0]!.actor_user_id },
      { type: 'gateway.dispute.escalated', actor: 'ops-2' },
      { type: 'gateway.dispute.resolved', actor: 'ops-3' },
    ]);
    const audit = await t.db
      .selectFrom('admin_audit_log')
      .select(['action', 'actor_user_id'])
      .where('target_id', '=', id)
      .orderBy('created_at')
      .execute();
    assert.equal(audit.length, 3);
    // A resolved dispute frees the sell order for a new one.
    assert.equal((await open(a.jwt, { sell_order_id: sell.id, notes: 'reopened' })).statusCode, 201);
  });

  it("favor_merchant on a completed sell order gives the fills' PAY back from the buyer to the seller, once", async () => {
    const sell = await completedSell(a.jwt, 6 * PAY);
    const id = (await open(a.jwt, { sell_order_id: sell.id, notes: 'payout reversed by the bank' })).json().data
      .id as string;
    await admin('POST', `/admin/disputes/${id}/investigate`, {});
    const before_balances = await balancesOf(t, a.id);
    const resolved = await admin('POST', `/admin/disputes/${id}/resolve`, { outcome: 'favor_merchant' });
    assert.equal(resolved.statusCode, 200, resolved.body);
    assert.equal(resolved.json().data.resolution.ledger_effect, 'return_to_seller');
    assert.equal(resolved.json().data.resolution.amount_micro_pay, 6 * PAY);
    const transfer = await t.db
      .selectFrom('ledger_transfers')
      .selectAll()
      .where('key', 'like', `dispute:${id}:fill:%`)
      .executeTakeFirstOrThrow();
    assert.equal(transfer.kind, 'transfer');
    assert.equal(transfer.credit_account, accounts.merchantAvailable(a.id, false));
    assert.equal(resolved.json().data.resolution.ledger_transfer_id, transfer.id);
    assert.equal((await balancesOf(t, a.id)).available, before_balances.available + 6 * PAY);
    // A second dispute on the same sell order cannot move PAY again.
    const second = (await open(a.jwt, { sell_order_id: sell.id, notes: 'again' })).json().data.id as string;
    await admin('POST', `/admin/disputes/${second}/investigate`, {});
    const again = await admin('POST', `/admin/disputes/${second}/resolve`, { outcome: 'favor_merchant' });
    assert.equal(again.json().data.resolution.ledger_effect, 'none');
    assert.equal((await balancesOf(t, a.id)).available, before_balances.available + 6 * PAY);
  });

  it("favor_counterparty on a failed matched sell order gives the fills' PAY back from the seller to the buyer", async () => {
    const sell = await failedMatchedSell(b.jwt, 4 * PAY);
    const id = (await open(b.jwt, { sell_order_id: sell.id, notes: 'cash leg failed' })).json().data.id as string;
    await admin('POST', `/admin/disputes/${id}/investigate`, {});
    const before_balances = await balancesOf(t, b.id);
    const resolved = await admin('POST', `/admin/disputes/${id}/resolve`, { outcome: 'favor_counterparty' });
    assert.equal(resolved.statusCode, 200, resolved.body);
    assert.equal(resolved.json().data.resolution.ledger_effect, 'return_to_buyers');
    assert.equal((await balancesOf(t, b.id)).available, before_balances.available - 4 * PAY);
    const move = await t.db
      .selectFrom('ledger_transfers')
      .selectAll()
      .where('key', 'like', `dispute:${id}:fill:%`)
      .executeTakeFirstOrThrow();
    assert.deepEqual([move.kind, move.debit_account], ['transfer', accounts.merchantAvailable(b.id, false)]);
  });

  it('resolutions that move nothing: favor_merchant on a failed order, favor_counterparty on a completed one', async () => {
    const failed = await failedMatchedSell(a.jwt, PAY);
    const completed = await completedSell(a.jwt, PAY);
    for (const [sell, outcome] of [
      [failed, 'favor_merchant'],
      [completed, 'favor_counterparty'],
    ] as const) {
      const id = (await open(a.jwt, { sell_order_id: sell.id, notes: outcome })).json().data.id as string;
      await admin('POST', `/admin/disputes/${id}/investigate`, {});
      const resolved = await admin('POST', `/admin/disputes/${id}/resolve`, { outcome });
      assert.equal(resolved.json().data.resolution.ledger_effect, 'none');
      assert.equal(
        await t.db.selectFrom('ledger_transfers').select('id').where('key', '=', id).executeTakeFirst(),
        undefined,
      );
    }
  });

  it('10 concurrent resolves of one dispute: one 200, the rest 409, a single move', async () => {
    const sell = await completedSell(a.jwt, 2 * PAY);
    const id = (await open(a.jwt, { sell_order_id: sell.id, notes: 'race' })).json().data.id as string;
    await admin('POST', `/admin/disputes/${id}/investigate`, {});
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => admin('POST', `/admin/disputes/${id}/resolve`, { outcome: 'favor_merchant' })),
    );
    assert.equal(responses.filter((r) => r.statusCode === 200).length, 1);
    for (const r of responses.filter((r) => r.statusCode !== 200)) expectError(r, 409, 'DISPUTE_BAD_STATE');
    assert.equal(
      (await t.db.selectFrom('ledger_transfers').select('id').where('key', 'like', `dispute:${id}:%`).execute()).length,
      1,
    );
    assert.equal((await t.application.ledger.verify()).ok, true);
  });
});
