import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_HEADERS, startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { completedPayments } from '../helpers/payments.ts';

/** Operator routes on settlement batches: fail, retry, adjustments, the run, and the audit log of each action. */
describe('settlements: admin retry, adjustments and audit log', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let batch_id: string;

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant();
    await t.createSeller(thbSeller());
    await completedPayments(t, merchant.live, [
      { order_id: 'a', amount: 10000 },
      { order_id: 'b', amount: 20000 },
    ]);
    const run = await t.admin('POST', '/admin/settlements/run');
    batch_id = run.json().data.batches[0].id;
    // gross 30000, fee 450, net 29550
  });
  after(() => t.close());

  const eventsOf = async (type: string) =>
    t.db.selectFrom('events').selectAll().where('resource_id', '=', batch_id).where('type', '=', type).execute();

  it('refuses a retry of a completed batch with 409 SETTLEMENT_BAD_STATE', async () => {
    const response = await t.admin('POST', `/admin/settlements/${batch_id}/retry`);
    assert.equal(response.statusCode, 409);
    assert.equal(response.json().error.code, 'SETTLEMENT_BAD_STATE');
  });

  it('marks a completed batch failed, then retries it back to completed', async () => {
    t.clock.advance(60_000);
    const failed = await t.admin('POST', `/admin/settlements/${batch_id}/fail`, {
      reason: 'bank returned payout: account closed',
    });
    assert.equal(failed.statusCode, 200, failed.body);
    assert.equal(failed.json().data.status, 'failed');
    assert.equal(failed.json().data.failure_reason, 'bank returned payout: account closed');
    assert.equal(failed.json().data.failed_at, t.clock.now().toISOString());
    assert.equal((await eventsOf('settlement.failed')).length, 1);
    const merchant_view = await t.call('GET', `/v1/settlements?status=failed`, merchant.live);
    assert.deepEqual(
      merchant_view.json().data.map((batch: any) => batch.id),
      [batch_id],
    );

    const again = await t.admin('POST', `/admin/settlements/${batch_id}/fail`, { reason: 'twice' });
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().error.code, 'SETTLEMENT_BAD_STATE');

    t.clock.advance(60_000);
    const retried = await t.admin('POST', `/admin/settlements/${batch_id}/retry`);
    assert.equal(retried.statusCode, 200, retried.body);
    assert.deepEqual(
      [retried.json().data.status, retried.json().data.retry_count, retried.json().data.failure_reason],
      ['completed', 1, null],
    );
    assert.equal(retried.json().data.completed_at, t.clock.now().toISOString());
    assert.equal((await eventsOf('settlement.completed')).length, 1, 'the run alone: once per batch');
    const [retried_event] = await eventsOf('settlement.retried');
    assert.ok(retried_event, 'the retry is its own event');
    assert.deepEqual(
      [(retried_event.payload as any).data.status, (retried_event.payload as any).data.retry_count],
      ['completed', 1],
    );
    const payments = await t.db.selectFrom('payments').select('status').where('settlement_id', '=', batch_id).execute();
    assert.deepEqual(
      payments.map((payment) => payment.status),
      ['settled', 'settled'],
    );
  });

  it('concurrent retries of one failed batch: exactly one wins', async () => {
    await t.admin('POST', `/admin/settlements/${batch_id}/fail`, { reason: 'returned again' });
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => t.admin('POST', `/admin/settlements/${batch_id}/retry`)),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    assert.deepEqual(statuses, [200, 409, 409, 409, 409, 409]);
    for (const response of responses.filter((r) => r.statusCode === 409))
      assert.equal(response.json().error.code, 'SETTLEMENT_BAD_STATE');
    const row = await t.db
      .selectFrom('settlements')
      .select(['status', 'retry_count'])
      .where('id', '=', batch_id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { status: 'completed', retry_count: 2 });
    assert.equal((await eventsOf('settlement.completed')).length, 1, 'still once per batch');
    assert.equal((await eventsOf('settlement.retried')).length, 2, 'one per retry that won');
  });

  it('adds signed adjustments to the net, shown to the merchant', async () => {
    const credit = await t.admin('POST', `/admin/settlements/${batch_id}/adjustments`, {
      amount_minor: 1234,
      reason: 'missed payment o-77',
    });
    assert.equal(credit.statusCode, 201, credit.body);
    assert.deepEqual(
      [credit.json().data.adjustments_minor, credit.json().data.net_minor, credit.json().data.net_decimal],
      [1234, 29550 + 1234, '307.84'],
    );
    t.clock.advance(1000);
    const debit = await t.admin('POST', `/admin/settlements/${batch_id}/adjustments`, {
      amount_minor: -784,
      reason: 'refund outside the gateway',
    });
    assert.equal(debit.statusCode, 201);
    assert.deepEqual([debit.json().data.adjustments_minor, debit.json().data.net_minor], [450, 30000]);
    const read = await t.call('GET', `/v1/settlements/${batch_id}`, merchant.live);
    assert.deepEqual(
      read.json().data.adjustments.map((a: any) => [a.amount_minor, a.amount_decimal, a.reason]),
      [
        [1234, '12.34', 'missed payment o-77'],
        [-784, '-7.84', 'refund outside the gateway'],
      ],
    );
    assert.equal(read.json().data.adjustments[0].actor_user_id, undefined, 'operator identity stays internal');
    assert.equal((await eventsOf('settlement.adjusted')).length, 2);
  });

  it('refuses an adjustment that would make the net negative, and a zero one', async () => {
    const negative = await t.admin('POST', `/admin/settlements/${batch_id}/adjustments`, {
      amount_minor: -30001,
      reason: 'too much',
    });
    assert.equal(negative.statusCode, 409);
    assert.equal(negative.json().error.code, 'SETTLEMENT_BAD_STATE');
    const zero = await t.admin('POST', `/admin/settlements/${batch_id}/adjustments`, {
      amount_minor: 0,
      reason: 'nothing',
    });
    assert.equal(zero.statusCode, 400);
    assert.equal(zero.json().error.code, 'VALIDATION_ERROR');
    for (const body of [
      { amount_minor: 1 },
      { amount_minor: 1.5, reason: 'x' },
      { amount_minor: 1, reason: '' },
      { amount_minor: 1, reason: 'x', extra: true },
    ]) {
      const response = await t.admin('POST', `/admin/settlements/${batch_id}/adjustments`, body);
      assert.equal(response.statusCode, 400, JSON.stringify(body));
    }
    const row = await t.db
      .selectFrom('settlements')
      .select('net_minor')
      .where('id', '=', batch_id)
      .executeTakeFirstOrThrow();
    assert.equal(row.net_minor, 30000);
  });

  it('concurrent debits never take the net below zero', async () => {
    // net 30000: twenty debits of 2000 at once, at most 15 fit
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.admin('POST', `/admin/settlements/${batch_id}/adjustments`, { amount_minor: -2000, reason: `debit ${i}` }),
      ),
    );
    const created = responses.filter((response) => response.statusCode === 201).length;
    assert.equal(created, 15);
    assert.ok(
      responses.every(
        (response) => response.statusCode === 201 || response.json().error.code === 'SETTLEMENT_BAD_STATE',
      ),
    );
    const row = await t.db.selectFrom('settlements').selectAll().where('id', '=', batch_id).executeTakeFirstOrThrow();
    const adjustments = await t.db
      .selectFrom('settlement_adjustments')
      .select('amount_minor')
      .where('settlement_id', '=', batch_id)
      .execute();
    assert.equal(row.net_minor, 0);
    assert.equal(
      row.adjustments_minor,
      adjustments.reduce((sum, a) => sum + a.amount_minor, 0),
    );
  });

  it('keeps an audit log of every operator action, newest first, with the actor', async () => {
    const page = await t.admin('GET', `/admin/settlements/${batch_id}/audit-log?limit=100`);
    assert.equal(page.statusCode, 200, page.body);
    const actions = page.json().data.map((entry: any) => entry.action);
    assert.equal(actions.filter((a: string) => a === 'settlement.fail').length, 2);
    assert.equal(actions.filter((a: string) => a === 'settlement.retry').length, 2);
    assert.equal(actions.filter((a: string) => a === 'settlement.adjust').length, 2 + 15);
    assert.ok(
      page
        .json()
        .data.every(
          (entry: any) =>
            entry.actor_user_id === ADMIN_HEADERS['x-actor-user-id'] && entry.actor_role === 'super_admin',
        ),
    );
    const first = await t.admin('GET', `/admin/settlements/${batch_id}/audit-log?limit=2`);
    assert.equal(first.json().data.length, 2);
    const second = await t.admin(
      'GET',
      `/admin/settlements/${batch_id}/audit-log?limit=2&cursor=${first.json().next_cursor}`,
    );
    assert.notEqual(second.json().data[0].id, first.json().data[1].id);
    const runs = await t.db.selectFrom('admin_audit_log').selectAll().where('action', '=', 'settlement.run').execute();
    assert.equal(runs.length, 1);
    assert.deepEqual((runs[0]!.details as any).settlement_ids, [batch_id]);
  });

  it('answers 404 on an unknown batch and 400 on a bad id', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const [method, url, body] of [
      ['POST', `/admin/settlements/${unknown}/retry`, undefined],
      ['POST', `/admin/settlements/${unknown}/fail`, { reason: 'x' }],
      ['POST', `/admin/settlements/${unknown}/adjustments`, { amount_minor: 1, reason: 'x' }],
      ['GET', `/admin/settlements/${unknown}/audit-log`, undefined],
    ] as const) {
      const response = await t.admin(method, url, body);
      assert.equal(response.statusCode, 404, url);
      assert.equal(response.json().error.code, 'NOT_FOUND');
    }
    assert.equal((await t.admin('POST', '/admin/settlements/nope/retry')).statusCode, 400);
  });

  it('answers 401 without the admin token and 403 ADMIN_FORBIDDEN for a non-super-admin; merchants keys are not admin', async () => {
    const routes: [string, string, unknown][] = [
      ['POST', '/admin/settlements/run', undefined],
      ['POST', `/admin/settlements/${batch_id}/retry`, undefined],
      ['POST', `/admin/settlements/${batch_id}/fail`, { reason: 'x' }],
      ['POST', `/admin/settlements/${batch_id}/adjustments`, { amount_minor: 1, reason: 'x' }],
      ['GET', `/admin/settlements/${batch_id}/audit-log`, undefined],
    ];
    for (const [method, url, body] of routes) {
      const payload = body === undefined ? {} : { payload: body as object };
      const none = await t.request({ method: method as 'GET', url, ...payload });
      assert.equal(none.statusCode, 401, url);
      assert.equal(none.json().error.code, 'UNAUTHORIZED');
      const key = await t.call(method as 'GET', url, merchant.live, body);
      assert.equal(key.statusCode, 401, url);
      const operator = await t.request({
        method: method as 'GET',
        url,
        headers: { ...ADMIN_HEADERS, 'x-actor-role': 'support' },
        ...payload,
      });
      assert.equal(operator.statusCode, 403, url);
      assert.equal(operator.json().error.code, 'ADMIN_FORBIDDEN');
    }
    const row = await t.db
      .selectFrom('settlements')
      .select(['status', 'net_minor'])
      .where('id', '=', batch_id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { status: 'completed', net_minor: 0 }, 'refused calls changed nothing');
  });
});
