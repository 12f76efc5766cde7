import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { fillReference } from '../../src/modules/buy-orders/present.ts';
import { accounts } from '../../src/modules/ledger/port.ts';
import { sweepSellOrders } from '../../src/modules/sell-orders/close.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import {
  balancesOf,
  buyBody,
  createBuy,
  createSell,
  eventTypes,
  expectError,
  fund,
  inFlightSell,
  matchAndInstruct,
  merchantCall,
  MINT_SOURCE,
  PAY,
  receipt,
  scriptedValidator,
  sellBody,
  switchableLedger,
} from '../helpers/orders.ts';

const confirmBody = (extra: Record<string, unknown> = {}) => ({
  receipt_base64: receipt(),
  content_type: 'application/pdf',
  ...extra,
});

describe('sell orders: match, cash leg, confirm, sweeps', () => {
  let t: TestApp;
  let seller: TestMerchant;
  let buyer: TestMerchant;
  let other: TestMerchant;
  const validator = scriptedValidator();
  const ledger = switchableLedger();

  before(async () => {
    t = await startTestApp({
      env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE, CASH_LEG_RETRY_MAX: '3', CASH_LEG_RETRY_TIMEOUT_HOURS: '48' },
      overrides: { validator, ledger },
    });
    ledger.attach(t);
    seller = await t.createMerchant('Seller');
    buyer = await t.createMerchant('Buyer');
    other = await t.createMerchant('Other');
    await fund(t, seller.id, 1_000 * PAY);
  });
  after(() => t.close());

  const confirm = (id: string, body: unknown = confirmBody(), key: string | null = randomUUID(), jwt = seller.jwt) =>
    merchantCall(t, jwt, 'POST', `/v1/merchant-sell-orders/${id}/confirm-cash-leg`, body, key);

  it('the matcher pairs the sell with a buy (mint to the buyer), the worker issues the cash-leg instruction', async () => {
    const sell = await createSell(t, seller.jwt, sellBody(7 * PAY));
    const buy = await createBuy(t, buyer.jwt, buyBody(7 * PAY));
    const buyer_before = await balancesOf(t, buyer.id);
    const { runMatcher } = await import('../../src/modules/payouts/matcher.ts');
    assert.equal(await runMatcher(t.application.payouts.matcher), 1);
    const matched = (await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${sell.id}`)).json().data;
    assert.equal(matched.status, 'matched');
    assert.equal(matched.matched_buy_order_id, buy.id);
    assert.ok(matched.matched_at);
    assert.equal((await balancesOf(t, buyer.id)).available, buyer_before.available + 7 * PAY);
    expectError(await confirm(sell.id), 409, 'SELL_ORDER_BAD_STATE');
    await matchAndInstruct(t);
    const in_flight = (await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${sell.id}`)).json().data;
    assert.equal(in_flight.status, 'cash_leg_in_flight');
    assert.ok(in_flight.cash_leg_requested_at);
    assert.deepEqual(await eventTypes(t, sell.id), ['sell_order.cash_leg_requested']);
    const instruction = await t.db
      .selectFrom('events')
      .select('payload')
      .where('resource_id', '=', sell.id)
      .executeTakeFirstOrThrow();
    // The seller is told what to expect: the buyer's transfer into its own destination, with the fill's reference.
    const fill = await t.db
      .selectFrom('order_fills')
      .select('id')
      .where('sell_order_id', '=', sell.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual((instruction.payload as { data: { cash_leg: unknown } }).data.cash_leg, {
      direction: 'buyers_pay_you',
      buy_order_id: buy.id,
      fiat_currency: 'THB',
      fiat_amount: 35_000,
      amount_micro_pay: 7 * PAY,
      to: { rail: 'promptpay', promptpay_id: '0812345678' },
      fills: [
        {
          buy_order_id: buy.id,
          payer_name: 'Buyer',
          reference: fillReference(fill.id),
          amount_micro_pay: 7 * PAY,
          fiat_amount: 35_000,
        },
      ],
    });
  });

  it('confirm with accepted evidence: completed, attempt counted, reserve burned with key = sell order id, sell_order.completed', async () => {
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, 6 * PAY);
    const before_balances = await balancesOf(t, seller.id);
    const key = randomUUID();
    const evidence = confirmBody({ reference: 'TRX-1' });
    const response = await confirm(sell.id, evidence, key);
    assert.equal(response.statusCode, 200, response.body);
    const order = response.json().data;
    assert.equal(order.status, 'completed');
    assert.equal(order.cash_leg_attempts, 1);
    assert.equal(order.last_cash_leg_outcome, 'verified');
    assert.equal(order.last_cash_leg_attempt_at, t.clock.now().toISOString());
    assert.ok(order.completed_at);
    const burn = await t.db
      .selectFrom('ledger_transfers')
      .selectAll()
      .where('key', '=', sell.id)
      .executeTakeFirstOrThrow();
    assert.equal(burn.kind, 'burn');
    assert.equal(burn.amount_micro_pay, 6 * PAY);
    assert.equal(burn.debit_account, accounts.merchantReserve(seller.id, false));
    assert.equal(burn.credit_account, accounts.mintSource(MINT_SOURCE, false));
    assert.equal((await balancesOf(t, seller.id)).reserve, before_balances.reserve - 6 * PAY);
    assert.deepEqual(await eventTypes(t, sell.id), ['sell_order.cash_leg_requested', 'sell_order.completed']);
    // Same key, same body: a no-op replay. Another body: 409. A new key on a completed order: 409 bad state.
    const calls = validator.calls;
    const replay = await confirm(sell.id, evidence, key);
    assert.equal(replay.statusCode, 200);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.json().data.cash_leg_attempts, 1);
    expectError(await confirm(sell.id, confirmBody({ reference: 'TRX-2' }), key), 409, 'IDEMPOTENCY_KEY_CONFLICT');
    expectError(await confirm(sell.id), 409, 'SELL_ORDER_BAD_STATE');
    assert.equal(validator.calls, calls, 'no validator call for a completed order');
    assert.equal(
      (await t.db.selectFrom('ledger_transfers').select('id').where('key', '=', sell.id).execute()).length,
      1,
    );
    assert.equal((await t.application.ledger.verify()).ok, true);
  });

  it('a failed, unverified or timed-out leg stays in flight and counts an attempt; the next confirm can complete it', async () => {
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, 2 * PAY);
    for (const [i, outcome] of (['failed', 'unverified'] as const).entries()) {
      validator.next.push(outcome);
      const response = await confirm(sell.id);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().data.status, 'cash_leg_in_flight');
      assert.equal(response.json().data.cash_leg_attempts, i + 1);
      assert.equal(response.json().data.last_cash_leg_outcome, outcome);
    }
    const attempts = await t.db
      .selectFrom('sell_order_cash_leg_attempts')
      .selectAll()
      .where('sell_order_id', '=', sell.id)
      .orderBy('attempt_number')
      .execute();
    assert.deepEqual(
      attempts.map((a) => [a.attempt_number, a.outcome, a.reason]),
      [
        [1, 'failed', 'amount_mismatch'],
        [2, 'unverified', null],
      ],
    );
    const done = await confirm(sell.id);
    assert.equal(done.json().data.status, 'completed');
    assert.equal(done.json().data.cash_leg_attempts, 3);
  });

  it('400 on missing or bad evidence (no validator call); 403 for another merchant; 404 unknown; 401 without identity', async () => {
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, PAY);
    const calls = validator.calls;
    for (const body of [
      {},
      { content_type: 'image/png' },
      { receipt_base64: receipt() },
      confirmBody({ receipt_base64: '' }),
      confirmBody({ receipt_base64: 'not base64!!' }),
      confirmBody({ receipt_base64: 'abcde' }),
      confirmBody({ content_type: 'text/plain' }),
      confirmBody({ extra: 1 }),
    ]) {
      expectError(await confirm(sell.id, body), 400, 'VALIDATION_ERROR');
    }
    expectError(await confirm(sell.id, confirmBody(), null), 400, 'VALIDATION_ERROR');
    expectError(await confirm(sell.id, confirmBody(), 'nope'), 400, 'VALIDATION_ERROR');
    expectError(await confirm(sell.id, confirmBody(), randomUUID(), other.jwt), 403, 'SELL_ORDER_NOT_OWNER');
    expectError(await confirm(randomUUID()), 404, 'NOT_FOUND');
    expectError(
      await merchantCall(t, null, 'POST', `/v1/merchant-sell-orders/${sell.id}/confirm-cash-leg`, confirmBody()),
      401,
      'UNAUTHORIZED',
    );
    assert.equal(validator.calls, calls);
    const order = (await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${sell.id}`)).json().data;
    assert.equal(order.cash_leg_attempts, 0);
    assert.equal(order.status, 'cash_leg_in_flight');
  });

  it('ledger down on the burn: 502 SELL_ORDER_LEDGER_UNAVAILABLE, rolled back, the retry costs no attempt', async () => {
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, 3 * PAY);
    ledger.down_for.add('burn');
    const key = randomUUID();
    try {
      expectError(await confirm(sell.id, confirmBody(), key), 502, 'SELL_ORDER_LEDGER_UNAVAILABLE');
      expectError(await confirm(sell.id, confirmBody(), key), 502, 'SELL_ORDER_LEDGER_UNAVAILABLE');
    } finally {
      ledger.down_for.delete('burn');
    }
    const still = (await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${sell.id}`)).json().data;
    assert.equal(still.status, 'cash_leg_in_flight');
    assert.equal(still.cash_leg_attempts, 0);
    assert.equal(
      (
        await t.db
          .selectFrom('sell_order_cash_leg_attempts')
          .select('id')
          .where('sell_order_id', '=', sell.id)
          .execute()
      ).length,
      0,
    );
    // The same key is free to run again once the ledger is back.
    const retry = await confirm(sell.id, confirmBody(), key);
    assert.equal(retry.statusCode, 200, retry.body);
    assert.equal(retry.headers['idempotent-replayed'], undefined);
    assert.equal(retry.json().data.status, 'completed');
    assert.equal(retry.json().data.cash_leg_attempts, 1);
  });

  it('ledger down on create: 502, nothing kept', async () => {
    ledger.down_for.add('transfer');
    const before_count = (await t.db.selectFrom('sell_orders').select('id').execute()).length;
    try {
      expectError(
        await merchantCall(t, seller.jwt, 'POST', '/v1/merchant-sell-orders', sellBody(PAY)),
        502,
        'SELL_ORDER_LEDGER_UNAVAILABLE',
      );
    } finally {
      ledger.down_for.delete('transfer');
    }
    assert.equal((await t.db.selectFrom('sell_orders').select('id').execute()).length, before_count);
  });

  it('20 concurrent confirms with accepted evidence: one completion, one burn', async () => {
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, 4 * PAY);
    const reserve_before = (await balancesOf(t, seller.id)).reserve;
    const responses = await Promise.all(Array.from({ length: 20 }, () => confirm(sell.id)));
    const completed = responses.filter((r) => r.statusCode === 200);
    assert.equal(completed.length, 1, responses.map((r) => r.statusCode).join(','));
    for (const r of responses.filter((r) => r.statusCode !== 200)) expectError(r, 409, 'SELL_ORDER_BAD_STATE');
    assert.equal(
      (await t.db.selectFrom('ledger_transfers').select('id').where('key', '=', sell.id).execute()).length,
      1,
    );
    assert.equal((await balancesOf(t, seller.id)).reserve, reserve_before - 4 * PAY);
    assert.deepEqual(
      (await eventTypes(t, sell.id)).filter((e) => e === 'sell_order.completed'),
      ['sell_order.completed'],
    );
  });

  it('sweep: a pending order past expires_at fails expired_unmatched and its reserve is released', async () => {
    const sell = await createSell(t, seller.jwt, sellBody(5 * PAY, 'SGD'));
    const before_balances = await balancesOf(t, seller.id);
    t.clock.advance(24 * 3600_000 - 1000);
    const sweep = () => sweepSellOrders(t.application.payouts.sell_orders);
    await sweep();
    assert.equal(
      (await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${sell.id}`)).json().data.status,
      'pending',
    );
    t.clock.advance(1000);
    assert.ok((await sweep()) >= 1);
    const failed = (await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${sell.id}`)).json().data;
    assert.equal(failed.status, 'failed');
    assert.equal(failed.failure_reason, 'expired_unmatched');
    assert.deepEqual(await balancesOf(t, seller.id), {
      available: before_balances.available + 5 * PAY,
      reserve: before_balances.reserve - 5 * PAY,
    });
    assert.deepEqual(await eventTypes(t, sell.id), ['sell_order.failed']);
    // An expired sell is never matched, even if a buy shows up before the sweep would run.
    await createBuy(t, buyer.jwt, buyBody(5 * PAY, 'SGD'));
    assert.equal(await matchAndInstruct(t), 0);
    assert.equal(await sweep(), 0, 'nothing left to sweep');
  });

  it("sweep: CASH_LEG_RETRY_MAX failed attempts -> failed cash_leg_retry_exhausted, reserve released, the buyer's PAY taken back, supply as before the match; no dispute while the switch is off", async () => {
    const supply_before = (await t.admin('GET', '/admin/ledger/supply')).json().data.live.circulation_micro_pay;
    const buyer_before = await balancesOf(t, buyer.id);
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, 8 * PAY);
    assert.equal((await balancesOf(t, buyer.id)).available, buyer_before.available + 8 * PAY);
    const before_balances = await balancesOf(t, seller.id);
    for (let i = 0; i < 3; i++) {
      validator.next.push('failed');
      assert.equal((await confirm(sell.id)).json().data.status, 'cash_leg_in_flight');
    }
    assert.ok((await sweepSellOrders(t.application.payouts.sell_orders)) >= 1);
    const failed = (await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${sell.id}`)).json().data;
    assert.equal(failed.status, 'failed');
    assert.equal(failed.failure_reason, 'cash_leg_retry_exhausted');
    assert.equal(failed.cash_leg_attempts, 3);
    assert.deepEqual(await balancesOf(t, seller.id), {
      available: before_balances.available + 8 * PAY,
      reserve: before_balances.reserve - 8 * PAY,
    });
    // the fill's mint is burned back to the mint source: the buyer holds what it held before the match
    assert.deepEqual(await balancesOf(t, buyer.id), buyer_before);
    assert.equal((await t.admin('GET', '/admin/ledger/supply')).json().data.live.circulation_micro_pay, supply_before);
    const fill = await t.db
      .selectFrom('order_fills')
      .selectAll()
      .where('sell_order_id', '=', sell.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      [fill.reversed_micro_pay, fill.shortfall_micro_pay, fill.reversed_at?.getTime()],
      [8 * PAY, 0, t.clock.now().getTime()],
    );
    const burn = await t.db
      .selectFrom('ledger_transfers')
      .selectAll()
      .where('key', '=', `buy_order:${sell.matched_buy_order_id}:fill:${sell.id}:reversal`)
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      [burn.kind, burn.debit_account, burn.credit_account, burn.amount_micro_pay],
      ['burn', accounts.merchantAvailable(buyer.id, false), accounts.mintSource(MINT_SOURCE, false), 8 * PAY],
    );
    assert.deepEqual(await eventTypes(t, sell.id), ['sell_order.cash_leg_requested', 'sell_order.failed']);
    assert.equal(
      (await t.db.selectFrom('disputes').select('id').where('sell_order_id', '=', sell.id).execute()).length,
      0,
    );
    const late = await confirm(sell.id);
    assert.equal(late.statusCode, 200);
    assert.equal(late.json().data.status, 'failed');
  });

  it('sweep: in flight past CASH_LEG_RETRY_TIMEOUT_HOURS fails even with attempts left; a confirm after that answers 200 failed', async () => {
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, PAY);
    validator.next.push('unverified');
    assert.equal((await confirm(sell.id)).json().data.cash_leg_attempts, 1);
    t.clock.advance(48 * 3600_000);
    const calls = validator.calls;
    // The confirm applies the sweep's rule itself (the sweeper may not have run yet).
    const late = await confirm(sell.id);
    assert.equal(late.statusCode, 200, late.body);
    assert.equal(late.json().data.status, 'failed');
    assert.equal(late.json().data.failure_reason, 'cash_leg_retry_exhausted');
    assert.equal(validator.calls, calls, 'no validator call once out of retries');
    await sweepSellOrders(t.application.payouts.sell_orders); // other tests' in-flight orders time out too; this one is already failed
    // Already failed by the sweep: still 200 failed, nothing moves.
    const again = await confirm(sell.id);
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().data.status, 'failed');
    assert.deepEqual(
      (await eventTypes(t, sell.id)).filter((e) => e === 'sell_order.failed'),
      ['sell_order.failed'],
    );
  });

  it('cancel is refused once matched', async () => {
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, PAY);
    expectError(
      await merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${sell.id}/cancel`),
      409,
      'SELL_ORDER_BAD_STATE',
    );
    assert.equal((await t.application.ledger.verify()).ok, true);
  });
});

describe('GATEWAY_DISPUTE_AUTO_OPEN_ENABLED=true', () => {
  let t: TestApp;
  let seller: TestMerchant;
  let buyer: TestMerchant;
  const validator = scriptedValidator();

  before(async () => {
    t = await startTestApp({
      env: {
        LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE,
        CASH_LEG_RETRY_MAX: '2',
        GATEWAY_DISPUTE_AUTO_OPEN_ENABLED: 'true',
      },
      overrides: { validator },
    });
    seller = await t.createMerchant('Seller');
    buyer = await t.createMerchant('Buyer');
    await fund(t, seller.id, 100 * PAY);
  });
  after(() => t.close());

  it('a cash-leg failure opens one cash_leg_failure dispute and fires gateway.dispute.opened alongside sell_order.failed', async () => {
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, 2 * PAY);
    validator.next.push('failed', 'failed');
    for (let i = 0; i < 2; i++)
      await merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${sell.id}/confirm-cash-leg`, {
        receipt_base64: receipt(),
        content_type: 'image/png',
      });
    // Several sweepers at once: one failure, one dispute.
    await Promise.all(Array.from({ length: 4 }, () => sweepSellOrders(t.application.payouts.sell_orders)));
    const disputes = await t.db.selectFrom('disputes').selectAll().where('sell_order_id', '=', sell.id).execute();
    assert.equal(disputes.length, 1);
    assert.equal(disputes[0]!.kind, 'cash_leg_failure');
    assert.equal(disputes[0]!.status, 'opened');
    assert.equal(disputes[0]!.merchant_id, seller.id);
    const types = (
      await t.db
        .selectFrom('events')
        .select(['type', 'resource_id'])
        .where('merchant_id', '=', seller.id)
        .orderBy('seq')
        .execute()
    ).map((e) => e.type);
    const failed_at = types.indexOf('sell_order.failed');
    assert.ok(failed_at >= 0);
    assert.equal(types[failed_at + 1], 'gateway.dispute.opened');
    assert.equal(types.filter((type) => type === 'gateway.dispute.opened').length, 1);
    const listed = await merchantCall(t, seller.jwt, 'GET', '/v1/merchant-disputes?kind=cash_leg_failure');
    assert.equal(listed.json().data.length, 1);
    const detail = await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-disputes/${disputes[0]!.id}`);
    assert.equal(detail.json().data.events[0].actor_user_id, 'system');
  });

  it('a buyer that already spent part of the fill: the rest is burned, the spent part is its deficit (no overdraft), and the dispute records the reversal', async () => {
    const spender = await t.createMerchant('Spender');
    const sell = await inFlightSell(t, seller.jwt, spender.jwt, 5 * PAY);
    // PAY from an unconfirmed fill cannot be cashed out...
    expectError(
      await merchantCall(t, spender.jwt, 'POST', '/v1/merchant-sell-orders', sellBody(3 * PAY, 'SGD', 10_000)),
      409,
      'SELL_ORDER_INSUFFICIENT_BALANCE',
    );
    // ...but a debit before the reversal takes 3 of its 5 PAY elsewhere: only 2 PAY are left to take back
    await t.application.ledger.transfer({
      key: `test-fund:spend:${randomUUID()}`,
      kind: 'transfer',
      debit_account: accounts.merchantAvailable(spender.id, false),
      credit_account: accounts.merchantAvailable(seller.id, false),
      amount_micro_pay: 3 * PAY,
    });
    validator.next.push('failed', 'failed');
    for (let i = 0; i < 2; i++)
      await merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${sell.id}/confirm-cash-leg`, {
        receipt_base64: receipt(),
        content_type: 'image/png',
      });
    await sweepSellOrders(t.application.payouts.sell_orders);
    assert.deepEqual(await balancesOf(t, spender.id), { available: 0, reserve: 0 });
    const fill = await t.db
      .selectFrom('order_fills')
      .selectAll()
      .where('sell_order_id', '=', sell.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual([fill.reversed_micro_pay, fill.shortfall_micro_pay], [2 * PAY, 3 * PAY]);
    const balance = await merchantCall(t, spender.jwt, 'GET', `/v1/merchants/${spender.id}/balance`);
    assert.equal(balance.statusCode, 200, balance.body);
    assert.deepEqual([balance.json().data.available_micro_pay, balance.json().data.deficit_micro_pay], [0, 3 * PAY]);
    assert.notEqual(balance.json().data.countdown_days, null);
    const dispute = await t.db
      .selectFrom('disputes')
      .selectAll()
      .where('sell_order_id', '=', sell.id)
      .executeTakeFirstOrThrow();
    const opened = await t.db
      .selectFrom('dispute_events')
      .selectAll()
      .where('dispute_id', '=', dispute.id)
      .executeTakeFirstOrThrow();
    const reversal = (
      opened.details as {
        reversal: { reversed_micro_pay: number; shortfall_micro_pay: number; fills: { buyer_merchant_id: string }[] };
      }
    ).reversal;
    assert.deepEqual(
      [reversal.reversed_micro_pay, reversal.shortfall_micro_pay, reversal.fills[0]?.buyer_merchant_id],
      [2 * PAY, 3 * PAY, spender.id],
    );
    assert.match(dispute.notes, /2000000 micro-PAY burned, 3000000 micro-PAY owed/);
    assert.equal((await t.application.ledger.verify()).ok, true);
  });

  it('a merchant cancel or an expiry is not a cash-leg failure: no dispute', async () => {
    const cancelled = await createSell(t, seller.jwt, sellBody(PAY, 'AUD'));
    await merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${cancelled.id}/cancel`);
    const expiring = await createSell(t, seller.jwt, sellBody(PAY, 'USD'));
    t.clock.advance(25 * 3600_000);
    await sweepSellOrders(t.application.payouts.sell_orders);
    assert.equal(
      (await merchantCall(t, seller.jwt, 'GET', `/v1/merchant-sell-orders/${expiring.id}`)).json().data.failure_reason,
      'expired_unmatched',
    );
    assert.equal(
      (
        await t.db
          .selectFrom('disputes')
          .select('id')
          .where('sell_order_id', 'in', [cancelled.id, expiring.id])
          .execute()
      ).length,
      0,
    );
  });
});
