import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runSettlements, settleSandboxPayment } from '../../src/modules/settlements/service.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { completedPayments, settlementDeps, usdSeller } from '../helpers/payments.ts';

async function settlementState(t: TestApp) {
  const batches = await t.db.selectFrom('settlements').selectAll().execute();
  const items = await t.db.selectFrom('settlement_items').selectAll().execute();
  const payments = await t.db
    .selectFrom('payments')
    .select(['id', 'status', 'settlement_id', 'amount_minor'])
    .execute();
  return { batches, items, payments };
}

/** The invariants every run must keep, whatever ran concurrently or crashed. */
function assertConsistent(state: Awaited<ReturnType<typeof settlementState>>) {
  const item_ids = state.items.map((item) => item.payment_id);
  assert.equal(new Set(item_ids).size, item_ids.length, 'no payment in two batches');
  for (const batch of state.batches) {
    const mine = state.items.filter((item) => item.settlement_id === batch.id);
    assert.equal(batch.payment_count, mine.length);
    assert.equal(
      batch.gross_minor,
      mine.reduce((sum, item) => sum + item.amount_minor, 0),
    );
    assert.equal(
      batch.fee_minor,
      mine.reduce((sum, item) => sum + item.fee_minor, 0),
    );
    assert.equal(batch.net_minor, batch.gross_minor - batch.fee_minor + batch.adjustments_minor);
    assert.ok(batch.payment_count > 0, 'no empty batch');
    assert.equal(batch.status, 'completed');
  }
  for (const payment of state.payments) {
    const item = state.items.find((row) => row.payment_id === payment.id);
    if (payment.status === 'settled')
      assert.equal(payment.settlement_id, item?.settlement_id, `payment ${payment.id} points at its batch`);
    else assert.equal(item, undefined, `unsettled payment ${payment.id} is in no batch`);
  }
}

describe('settlement runs: concurrency, crashes, batch size, sandbox scenario', () => {
  let t: TestApp;
  let a: TestMerchant;
  let b: TestMerchant;

  before(async () => {
    t = await startTestApp();
    a = await t.createMerchant('A');
    b = await t.createMerchant('B');
    await t.createSeller(thbSeller(1_000_000_000));
    await t.createSeller(usdSeller(1_000_000_000));
  });
  after(() => t.close());

  it('several runs at once settle every payment exactly once', async () => {
    const specs = (prefix: string, currency: string) =>
      Array.from({ length: 6 }, (_, i) => ({ order_id: `${prefix}-${i}`, amount: 1000 + i * 101, currency }));
    const ids = [
      ...(await completedPayments(t, a.live, specs('a-thb', 'THB'))),
      ...(await completedPayments(t, a.live, specs('a-usd', 'USD'))),
      ...(await completedPayments(t, b.live, specs('b-thb', 'THB'))),
      ...(await completedPayments(t, a.sandbox, specs('a-sbx', 'THB'))),
    ];
    const deps = settlementDeps(t, { batch_max_payments: 4 });
    const results = await Promise.all([
      runSettlements(deps),
      runSettlements(deps),
      runSettlements(deps),
      t.admin('POST', '/admin/settlements/run'),
      t.admin('POST', '/admin/settlements/run'),
    ]);
    for (const result of results.slice(3)) assert.equal((result as { statusCode: number }).statusCode, 200);
    const state = await settlementState(t);
    assertConsistent(state);
    const settled = state.payments.filter((payment) => ids.includes(payment.id));
    assert.ok(settled.every((payment) => payment.status === 'settled'));
    assert.equal(state.items.length, ids.length);
    // 4 groups (merchant, mode, currency): never fewer batches than groups
    assert.ok(state.batches.length >= 4, `${state.batches.length} batches`);
    assert.ok(state.batches.every((batch) => batch.payment_count <= 6));
    const total = settled.reduce((sum, payment) => sum + payment.amount_minor, 0);
    assert.equal(
      state.batches.reduce((sum, batch) => sum + batch.gross_minor, 0),
      total,
    );
  });

  it('a crash inside a batch keeps nothing of it; batches committed before stay; a re-run settles the rest once', async () => {
    const ids = [
      ...(await completedPayments(t, a.live, [
        { order_id: 'c-a-1', amount: 5000 },
        { order_id: 'c-a-2', amount: 7000 },
      ])),
      ...(await completedPayments(t, b.live, [{ order_id: 'c-b-1', amount: 9000 }])),
    ];
    const before_state = await settlementState(t);
    let batches_seen = 0;
    const crash = async () =>
      runSettlements(
        settlementDeps(t, {
          before_commit: () => {
            batches_seen += 1;
            if (batches_seen === 2) throw new Error('simulated crash before commit');
          },
        }),
      );
    await assert.rejects(crash, /simulated crash/);
    const mid = await settlementState(t);
    assertConsistent(mid);
    assert.equal(
      mid.batches.length,
      before_state.batches.length + 1,
      'the first batch committed, the crashed one left nothing',
    );
    const pending = mid.payments.filter((payment) => ids.includes(payment.id) && payment.status === 'completed');
    assert.ok(pending.length >= 1 && pending.every((payment) => payment.settlement_id === null));
    const events_mid = await t.db
      .selectFrom('events')
      .select('id')
      .where('type', '=', 'settlement.completed')
      .execute();
    assert.equal(events_mid.length, mid.batches.length, 'no event for the crashed batch');

    const rerun = await runSettlements(settlementDeps(t));
    assert.equal(rerun.length, 1);
    assert.equal(rerun[0]!.payment_count, pending.length);
    const final = await settlementState(t);
    assertConsistent(final);
    assert.ok(
      final.payments.filter((payment) => ids.includes(payment.id)).every((payment) => payment.status === 'settled'),
    );
    assert.deepEqual(await runSettlements(settlementDeps(t)), [], 'nothing left');
  });

  it('a crash in the only batch leaves every payment completed and unsettled', async () => {
    const ids = await completedPayments(t, b.live, [{ order_id: 'c-only', amount: 4321 }]);
    const count_before = (await settlementState(t)).batches.length;
    await assert.rejects(
      runSettlements(
        settlementDeps(t, {
          before_commit: () => {
            throw new Error('boom');
          },
        }),
      ),
      /boom/,
    );
    const state = await settlementState(t);
    assert.equal(state.batches.length, count_before);
    const payment = state.payments.find((row) => row.id === ids[0])!;
    assert.deepEqual([payment.status, payment.settlement_id], ['completed', null]);
    const rerun = await runSettlements(settlementDeps(t));
    assert.deepEqual(
      rerun.map((batch) => [batch.gross_minor, batch.fee_minor, batch.net_minor]),
      [[4321, 64, 4257]],
    );
  });

  it("reports the fee taken at completion, whatever the run's setting; never settles a payment completed after the run started", async () => {
    const ids = await completedPayments(t, a.live, [{ order_id: 'fee-1', amount: 10001 }]);
    const batches = await runSettlements(settlementDeps(t, { fee_bps: 275 }));
    // completed at the configured 150 bps: 10001 * 1.5% = 150.015 -> 150
    assert.deepEqual(
      batches.map((batch) => [batch.fee_bps, batch.fee_minor, batch.net_minor]),
      [[150, 150, 9851]],
    );
    const late = await completedPayments(t, a.live, [{ order_id: 'late-1', amount: 100 }]);
    t.clock.advance(-1000);
    assert.deepEqual(await runSettlements(settlementDeps(t)), [], 'completed after the cutoff');
    t.clock.advance(1000);
    assert.equal((await runSettlements(settlementDeps(t))).length, 1);
    assert.ok(ids.length === 1 && late.length === 1);
  });

  it('splits a big group into batches of at most batch_max_payments', async () => {
    await completedPayments(
      t,
      b.live,
      Array.from({ length: 5 }, (_, i) => ({ order_id: `big-${i}`, amount: 100 + i })),
    );
    const batches = await runSettlements(settlementDeps(t, { batch_max_payments: 2 }));
    assert.deepEqual(
      batches.map((batch) => batch.payment_count),
      [2, 2, 1],
    );
    assert.equal(
      batches.reduce((sum, batch) => sum + batch.gross_minor, 0),
      100 + 101 + 102 + 103 + 104,
    );
    assertConsistent(await settlementState(t));
  });

  it("settleSandboxPayment makes a one-payment sandbox batch in the caller's transaction", async () => {
    const [id] = await completedPayments(t, a.sandbox, [{ order_id: 'scenario-1', amount: 10000 }]);
    const payment = await t.db.selectFrom('payments').selectAll().where('id', '=', id!).executeTakeFirstOrThrow();
    const at = t.clock.now();
    const { settlement_id } = await t.db.transaction().execute((trx) => settleSandboxPayment(trx, at, payment, 150));
    const read = await t.call('GET', `/v1/settlements/${settlement_id}`, a.sandbox);
    assert.equal(read.statusCode, 200, read.body);
    assert.deepEqual(
      [
        read.json().data.status,
        read.json().data.is_sandbox,
        read.json().data.payment_count,
        read.json().data.gross_minor,
        read.json().data.fee_minor,
        read.json().data.net_minor,
      ],
      ['completed', true, 1, 10000, 150, 9850],
    );
    assert.equal((await t.call('GET', `/v1/settlements/${settlement_id}`, a.live)).statusCode, 404);
    assert.equal((await t.call('GET', `/v1/payments/${id}`, a.sandbox)).json().data.status, 'settled');
    const events = await t.db.selectFrom('events').selectAll().where('resource_id', '=', settlement_id).execute();
    assert.deepEqual(
      events.map((event) => [event.type, event.is_sandbox]),
      [['settlement.completed', true]],
    );

    // rolled back with its caller: nothing stays
    const [other_id] = await completedPayments(t, a.sandbox, [{ order_id: 'scenario-2', amount: 2000 }]);
    const other = await t.db.selectFrom('payments').selectAll().where('id', '=', other_id!).executeTakeFirstOrThrow();
    await assert.rejects(
      t.db.transaction().execute(async (trx) => {
        await settleSandboxPayment(trx, at, other);
        throw new Error('scenario aborted');
      }),
      /scenario aborted/,
    );
    const after_abort = await t.db
      .selectFrom('payments')
      .select(['status', 'settlement_id'])
      .where('id', '=', other_id!)
      .executeTakeFirstOrThrow();
    assert.deepEqual(after_abort, { status: 'completed', settlement_id: null });

    // a live payment, or one not completed, is refused
    const [live_id] = await completedPayments(t, a.live, [{ order_id: 'live-x', amount: 100 }]);
    const live = await t.db.selectFrom('payments').selectAll().where('id', '=', live_id!).executeTakeFirstOrThrow();
    await assert.rejects(
      t.db.transaction().execute((trx) => settleSandboxPayment(trx, at, live)),
      /sandbox payments only/,
    );
    const settled = await t.db.selectFrom('payments').selectAll().where('id', '=', id!).executeTakeFirstOrThrow();
    await assert.rejects(
      t.db.transaction().execute((trx) => settleSandboxPayment(trx, at, settled)),
      (error: any) => error.code === 'PAYMENT_BAD_STATE',
    );
    assertConsistent(await settlementState(t));
  });
});
