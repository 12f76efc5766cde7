import assert from 'node:assert/strict';
import { EVENTS_CHANNEL } from '../../src/modules/events/outbox.ts';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createAlone, PaymentCreateBatcher } from '../../src/modules/payments/create-batch.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';

const RETURN_URL = 'https://shop.example/return';

describe('the batching allocator: many creates in one transaction, each with its own answer', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let order = 0;
  const next = () => `batch-order-${++order}`;
  const batcher = () => t.application.payments.create_batcher as PaymentCreateBatcher;

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant();
  });
  beforeEach(async () => {
    await t.db.updateTable('sellers').set({ active: false }).where('synthetic', '=', false).execute();
  });
  after(() => t.close());

  const create = (body: Record<string, unknown>, headers?: Record<string, string>) =>
    t.call('POST', '/v1/trades', merchant.live, { return_url: RETURN_URL, currency: 'THB', ...body }, headers);

  it('one batch: a duplicate order_id, too little liquidity and bad input fail alone; the others commit FIFO with their keys', async () => {
    const seller = await t.createSeller(thbSeller(30_000));
    const taken = next();
    assert.equal((await create({ order_id: taken, amount: 1_000 })).statusCode, 201);
    const before_stats = { ...batcher().stats };
    const twice = next();
    const firstBody = { return_url: RETURN_URL, currency: 'THB', order_id: next(), amount: 10_000 };
    const responses = await Promise.all([
      t.call('POST', '/v1/trades', merchant.live, firstBody, { 'idempotency-key': 'batch-key-1' }),
      create({ order_id: taken, amount: 1_000 }, { 'idempotency-key': 'batch-key-2' }),
      create({ order_id: next(), amount: 30_000 }),
      create({ order_id: twice, amount: 5_000 }),
      create({ order_id: twice, amount: 5_000 }),
      create({ order_id: next(), amount: 'x1' }),
      create({ order_id: next(), amount: 10_000 }, { 'idempotency-key': 'batch-key-3' }),
    ]);
    const outcome = responses.map((r) => `${r.statusCode} ${r.statusCode === 201 ? 'ok' : r.json().error.code}`);
    // the two requests with one order_id: whichever came first wins
    assert.deepEqual([outcome[3], outcome[4]].sort(), ['201 ok', '409 PAYMENT_DUPLICATE_ORDER_ID']);
    assert.deepEqual(
      [outcome[0], outcome[1], outcome[2], outcome[5], outcome[6]],
      [
        '201 ok',
        '409 PAYMENT_DUPLICATE_ORDER_ID',
        '409 PAYMENT_INSUFFICIENT_LIQUIDITY',
        '400 VALIDATION_ERROR',
        '201 ok',
      ],
    );
    const stats = batcher().stats;
    assert.ok(stats.batches - before_stats.batches <= 2, `${stats.batches - before_stats.batches} batches`);
    assert.equal(stats.failed_batches, before_stats.failed_batches);
    // 1,000 + 10,000 + 5,000 + 10,000 reserved; the 30,000 that did not fit kept nothing
    const row = await t.db
      .selectFrom('sellers')
      .select(['reserved_minor'])
      .where('id', '=', seller.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.reserved_minor, 26_000);
    const legs = await t.db
      .selectFrom('payment_legs')
      .select((eb) => eb.fn.sum<string>('allocated_fiat_amount').as('total'))
      .where('seller_id', '=', seller.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(legs.total), 26_000);
    // the failed request's key was given back: the same key with another body runs anew
    const retried = await create({ order_id: next(), amount: 1_000 }, { 'idempotency-key': 'batch-key-2' });
    assert.equal(retried.statusCode, 201, retried.body);
    // a stored key replays the batch's answer
    const replay = await t.call('POST', '/v1/trades', merchant.live, JSON.parse(JSON.stringify(firstBody)), {
      'idempotency-key': 'batch-key-1',
    });
    assert.equal(replay.statusCode, 201, replay.body);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.json().data.id, responses[0]!.json().data.id);
    const events = await t.db
      .selectFrom('events')
      .select('resource_id')
      .where('type', '=', 'payment.matched')
      .where(
        'resource_id',
        'in',
        responses.filter((r) => r.statusCode === 201).map((r) => r.json().data.id),
      )
      .execute();
    assert.equal(events.length, 3);
  });

  it('batches in a row (each plans from the offers the call before it answered) stay FIFO and never overbook', async () => {
    const best = await t.createSeller(thbSeller(10_000, '35.00'));
    const next_best = await t.createSeller(thbSeller(10_000, '36.00'));
    // one create per batch: the first reads the offers, each after it plans from what the call before it answered
    const one_by_one = new PaymentCreateBatcher(t.application.payments, { max_batch: 1, gather_ms: 0 });
    const scope = { merchant_id: merchant.id, is_sandbox: false };
    const outcomes = await Promise.allSettled(
      [4_000, 4_000, 4_000, 4_000, 8_000].map((amount) => {
        const input = { order_id: next(), amount, currency: 'THB' as const, return_url: RETURN_URL };
        // a batch that planned from a read the one before overtook is refused and runs alone
        return one_by_one.create({
          scope,
          input,
          idempotency: undefined,
          alone: createAlone(t.application.payments, scope, input),
        });
      }),
    );
    const legs = outcomes.map((outcome) =>
      outcome.status === 'fulfilled'
        ? outcome.value.body.data.match_details.map(
            (leg) => `${leg.seller_id === best.id ? 'best' : 'next'} ${leg.allocated_fiat_amount}`,
          )
        : (outcome.reason as { code: string }).code,
    );
    // in arrival order: the best offer first, the rest on the next one, the last that fits nowhere fails alone
    assert.deepEqual(legs, [
      ['best 4000'],
      ['best 4000'],
      ['best 2000', 'next 2000'],
      ['next 4000'],
      'PAYMENT_INSUFFICIENT_LIQUIDITY',
    ]);
    const reserved = await t.db
      .selectFrom('sellers')
      .select(['id', 'reserved_minor'])
      .where('id', 'in', [best.id, next_best.id])
      .execute();
    assert.deepEqual(
      Object.fromEntries(reserved.map((row) => [row.id === best.id ? 'best' : 'next', row.reserved_minor])),
      { best: 10_000, next: 6_000 },
    );
    assert.equal(one_by_one.stats.failed_batches, 0);
    assert.equal(one_by_one.stats.refused, 0, 'no batch planned from offers its reservation then found taken');
    assert.equal(one_by_one.stats.planned_from_answer, 4, 'no offers read after the first batch');
  });

  it('the same key twice in one batch: one payment, the other request replays it', async () => {
    await t.createSeller(thbSeller(100_000));
    const body = { order_id: next(), amount: 2_000 };
    const responses = await Promise.all([
      create(body, { 'idempotency-key': 'same-key' }),
      create(body, { 'idempotency-key': 'same-key' }),
    ]);
    assert.deepEqual(
      responses.map((r) => r.statusCode),
      [201, 201],
    );
    assert.equal(responses[0]!.json().data.id, responses[1]!.json().data.id);
    assert.equal(responses.filter((r) => r.headers['idempotent-replayed'] === 'true').length, 1);
  });

  it('a batch wakes the dispatchers itself only when its events queued a delivery to send; a lone create wakes the listeners after its commit', async () => {
    await t.createSeller(thbSeller(100_000));
    let woken = 0;
    const notified: boolean[] = [];
    let heard = 0;
    const unlisten = await t.application.database.listen(EVENTS_CHANNEL, () => heard++);
    const off = t.application.database.commits.on('events', (commit) => {
      woken++;
      notified.push(commit.notified);
    });
    const batch = async () => {
      const responses = await Promise.all([
        create({ order_id: next(), amount: 1_000 }),
        create({ order_id: next(), amount: 1_000 }),
      ]);
      assert.deepEqual(
        responses.map((r) => r.statusCode),
        [201, 201],
      );
    };
    const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
    try {
      await settle();
      heard = 0;
      // no endpoint subscribed: the events get skipped deliveries, and no dispatcher is woken for them
      await batch();
      const after_quiet = woken;
      assert.ok(after_quiet >= 1, 'the batch told the commit watch');
      assert.ok(notified.every(Boolean), 'no commit of the batch asked for a wake-up of its own');
      await settle();
      assert.equal(heard, 0, 'nothing to send: no NOTIFY');

      const endpoint = await t.call('POST', '/v1/webhook-endpoints', merchant.live, {
        url: 'https://93.184.215.14/hooks',
        enabled_events: ['payment.matched'],
      });
      assert.equal(endpoint.statusCode, 201, endpoint.body);
      await settle();
      heard = 0;
      await batch();
      // the batch's call sent the dispatchers' NOTIFY itself, delivered at its commit: no second statement for it
      assert.ok(notified.every(Boolean), 'every commit of the batch notified by itself');
      for (let wait = 0; heard === 0 && wait < 100; wait++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.ok(heard >= 1, 'a LISTEN on the outbox channel heard the batch');
      const after_batch = woken;
      const scope = { merchant_id: merchant.id, is_sandbox: false };
      const input = { order_id: next(), amount: 1_000, currency: 'THB' as const, return_url: RETURN_URL };
      assert.equal((await createAlone(t.application.payments, scope, input)()).status, 201);
      assert.ok(woken > after_batch, 'the lone create woke it after its commit');
    } finally {
      off();
      await unlisten();
    }
  });
});
