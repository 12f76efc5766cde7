import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sweepSellOrders } from '../../src/modules/sell-orders/close.ts';
import { dispatchDueWebhooks, RETRY_DELAYS_MS } from '../../src/modules/webhooks/dispatcher.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { fund, inFlightSell, merchantCall, MINT_SOURCE, PAY, receipt, scriptedValidator } from '../helpers/orders.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

/**
 * A sell order's `sell_order.failed` and the `gateway.dispute.opened` it causes reach the merchant in that
 * order, through real deliveries: in the outbox, and at the merchant's endpoint even when the first delivery fails
 * and is retried (the dispute event waits behind it instead of overtaking it).
 */
describe('event order: sell_order.failed before the gateway.dispute.opened it causes', () => {
  let t: TestApp;
  let seller: TestMerchant;
  let buyer: TestMerchant;
  let receiver: Receiver;
  const validator = scriptedValidator();
  const dispatch = () => dispatchDueWebhooks({ ...t.application.webhooks.dispatch, timeout_ms: 2000 });
  const drain = async () => {
    for (let handled = await dispatch(); handled > 0; handled = await dispatch());
  };

  before(async () => {
    t = await startTestApp({
      env: {
        LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE,
        CASH_LEG_RETRY_MAX: '1',
        GATEWAY_DISPUTE_AUTO_OPEN_ENABLED: 'true',
      },
      overrides: { validator },
    });
    receiver = await startReceiver();
    seller = await t.createMerchant('Seller');
    buyer = await t.createMerchant('Buyer');
    await fund(t, seller.id, 100 * PAY);
    const set = await t.call('PUT', '/v1/webhook-endpoint', seller.live, { url: receiver.url });
    assert.equal(set.statusCode, 200, set.body);
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  async function failWithDispute() {
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, 5 * PAY);
    validator.next.push('failed');
    const attempt = await merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${sell.id}/confirm-cash-leg`, {
      receipt_base64: receipt(),
      content_type: 'image/png',
    });
    assert.equal(attempt.statusCode, 200, attempt.body);
    // Everything before the failure is delivered and forgotten.
    await drain();
    receiver.received.length = 0;
    assert.equal(await sweepSellOrders(t.application.payouts.sell_orders), 1);
    const dispute = await t.db
      .selectFrom('disputes')
      .select('id')
      .where('sell_order_id', '=', sell.id)
      .executeTakeFirstOrThrow();
    return { sell, dispute_id: dispute.id };
  }

  it('the outbox holds sell_order.failed first', async () => {
    const { sell, dispute_id } = await failWithDispute();
    const events = await t.db
      .selectFrom('events')
      .select(['type', 'seq'])
      .where('resource_id', 'in', [sell.id, dispute_id])
      .orderBy('seq')
      .execute();
    assert.deepEqual(
      events.slice(-2).map((e) => e.type),
      ['sell_order.failed', 'gateway.dispute.opened'],
    );
    await drain();
    assert.deepEqual(
      receiver.received.map((r) => r.body.type),
      ['sell_order.failed', 'gateway.dispute.opened'],
    );
  });

  it('a failed delivery of sell_order.failed holds the dispute event back until it succeeds', async () => {
    const { sell, dispute_id } = await failWithDispute();
    let refused = 0;
    receiver.answer = (received) => (received.body.type === 'sell_order.failed' && refused++ === 0 ? 500 : 200);
    await drain();
    // Only the refused attempt went out: the dispute event waits for it.
    assert.deepEqual(
      receiver.received.map((r) => r.body.type),
      ['sell_order.failed'],
    );
    t.clock.advance(RETRY_DELAYS_MS[0]!);
    await drain();
    const acknowledged = receiver.received.filter((r, index) => !(index === 0 && r.body.type === 'sell_order.failed'));
    assert.deepEqual(
      acknowledged.map((r) => r.body.type),
      ['sell_order.failed', 'gateway.dispute.opened'],
    );
    assert.equal(acknowledged[0]!.body.data.id, sell.id);
    assert.equal(acknowledged[1]!.body.data.id, dispute_id);
    assert.equal(acknowledged[1]!.body.data.sell_order_id, sell.id);
    receiver.answer = () => 200;
  });

  it('later dispute events stay behind too (escalated after opened, on the same line)', async () => {
    const { dispute_id } = await failWithDispute();
    receiver.answer = (received) => (received.body.type === 'sell_order.failed' ? 503 : 200);
    await t.admin('POST', `/admin/disputes/${dispute_id}/investigate`, {});
    await t.admin('POST', `/admin/disputes/${dispute_id}/escalate`, {});
    await drain();
    assert.deepEqual(new Set(receiver.received.map((r) => r.body.type)), new Set(['sell_order.failed']));
    receiver.answer = () => 200;
    t.clock.advance(RETRY_DELAYS_MS[0]!);
    await drain();
    const delivered = receiver.received.slice(1).map((r) => r.body.type);
    assert.deepEqual(delivered, ['sell_order.failed', 'gateway.dispute.opened', 'gateway.dispute.escalated']);
  });
});
