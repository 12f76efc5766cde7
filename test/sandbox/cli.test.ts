import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { verifyWebhook } from '../../clients/typescript/src/webhooks.js';
import { dispatchDueWebhooks } from '../../src/modules/webhooks/dispatcher.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { runMpay } from '../helpers/cli.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

const CLI = new URL('../../src/cli/main.ts', import.meta.url).pathname;

describe('mpay sandbox trigger and mpay listen', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let base: string;
  let receiver: Receiver;

  before(async () => {
    t = await startTestApp();
    base = await t.application.app.listen({ port: 0, host: '127.0.0.1' });
    merchant = await t.createMerchant('CLI');
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  it('sandbox trigger plays a scenario and prints the terminal payment', async () => {
    const result = await runMpay(['--url', base, '--api-key', merchant.sandbox, '--json', 'sandbox', 'trigger', 'matched_partial_fill', '--amount', '20000']);
    assert.equal(result.code, 0, result.stderr);
    const data = JSON.parse(result.stdout);
    assert.equal(data.scenario, 'matched_partial_fill');
    assert.equal(data.payment.status, 'completed');
    assert.deepEqual(data.payment.match_details.map((leg: any) => leg.allocated_fiat_amount), [13000, 7000]);
    const human = await runMpay(['--url', base, '--api-key', merchant.test, 'sandbox', 'trigger', 'expired']);
    assert.match(human.stdout, /^expired: payment sbx_\S+ is expired/);
    const live = await runMpay(['--url', base, '--api-key', merchant.live, 'sandbox', 'trigger', 'expired']);
    assert.equal(live.code, 1);
    assert.match(live.stderr, /403 SANDBOX_ONLY/);
    const unknown = await runMpay(['--url', base, '--api-key', merchant.sandbox, 'sandbox', 'trigger', 'refund']);
    assert.equal(unknown.code, 2);
  });

  it('sandbox trigger covers every event type: payment types through their scenario, the others through POST /v1/sandbox/events', async () => {
    const listed = await runMpay(['--json', 'sandbox', 'trigger', '--list']);
    assert.equal(listed.code, 0, listed.stderr);
    const { event_types } = JSON.parse(listed.stdout);
    for (const prefix of ['payment.', 'sell_order.', 'buy_order.', 'gateway.dispute.', 'pending_funds.', 'settlement.']) {
      assert.ok(event_types.some((type: string) => type.startsWith(prefix)), prefix);
    }
    const sell = await runMpay(['--url', base, '--api-key', merchant.sandbox, '--json', 'sandbox', 'trigger', 'sell_order.completed']);
    assert.equal(sell.code, 0, sell.stderr);
    const emitted = JSON.parse(sell.stdout);
    assert.equal(emitted.type, 'sell_order.completed');
    assert.equal(emitted.event.sandbox, true);
    assert.equal(emitted.event.data.status, 'completed');
    const paid = await runMpay(['--url', base, '--api-key', merchant.sandbox, '--json', 'sandbox', 'trigger', 'payment.failed']);
    assert.equal(JSON.parse(paid.stdout).payment.status, 'failed');
    const live = await runMpay(['--url', base, '--api-key', merchant.live, 'sandbox', 'trigger', 'buy_order.matched']);
    assert.equal(live.code, 1);
    assert.match(live.stderr, /403 SANDBOX_ONLY/);
  });

  it('listen registers its own temporary sandbox endpoint (events filter, signing secret printed, JSON printed), forwards, and removes it on exit', async () => {
    const drain = async () => {
      for (let handled = -1; handled !== 0; ) handled = await dispatchDueWebhooks({ ...t.application.webhooks.dispatch, timeout_ms: 5000 });
    };
    await drain();
    // The merchant's real sandbox endpoint: listen must leave it alone.
    const real = await startReceiver();
    try {
      assert.equal((await t.call('PUT', '/v1/webhook-endpoint', merchant.sandbox, { url: real.url })).statusCode, 200);
      const child = spawn(process.execPath, [CLI, '--url', base, '--api-key', merchant.sandbox, 'listen', '--forward-to', receiver.url, '--port', '0', '--events', 'payment.completed,sell_order.completed', '--print-json'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      try {
        while (!output.includes('Ready.')) await once(child.stdout, 'data');
        const secret = /signing secret is (whsec_\S+)/.exec(output)?.[1];
        assert.ok(secret, output);
        const endpoints = (await t.call('GET', '/v1/webhook-endpoints', merchant.sandbox)).json().data;
        assert.equal(endpoints.length, 2);
        const temporary = endpoints.find((endpoint: any) => !endpoint.is_default);
        assert.match(temporary.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
        assert.deepEqual(temporary.enabled_events, ['payment.completed', 'sell_order.completed']);
        assert.equal(temporary.mode, 'sandbox');
        assert.equal((await t.call('GET', '/v1/webhook-endpoint', merchant.sandbox)).json().data.url, real.url, 'the real default endpoint is unchanged');
        assert.deepEqual((await t.call('GET', '/v1/webhook-endpoints', merchant.live)).json().data, [], 'nothing live');

        await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, { scenario: 'matched_then_completed' });
        assert.equal((await t.call('POST', '/v1/sandbox/events', merchant.sandbox, { type: 'sell_order.completed' })).statusCode, 201);
        assert.equal((await t.call('POST', '/v1/sandbox/events', merchant.sandbox, { type: 'buy_order.created' })).statusCode, 201);
        await drain();
        const hooks = await receiver.waitFor(2);
        for (const hook of hooks) verifyWebhook(hook.raw, hook.headers, secret, { now: t.clock.now() });
        assert.deepEqual(hooks.map((hook) => hook.body['type']).sort(), ['payment.completed', 'sell_order.completed'], 'only the subscribed types');
        assert.deepEqual(real.received.map((hook) => hook.body['type']).sort(), ['buy_order.created', 'payment.completed', 'payment.matched', 'sell_order.completed'], 'the real endpoint got everything');
        while (!output.includes('sell_order.completed evt_')) await once(child.stdout, 'data');
        assert.match(output, /--> payment\.completed evt_\w+ payment sbx_\S+ \[sandbox\] {2}\[200\]/);
        assert.match(output, /^\{"[^\n]*"type":"payment\.completed"/m, '--print-json prints each event');
      } finally {
        child.kill('SIGTERM');
        await once(child, 'close');
      }
      assert.match(output, /Removed the temporary endpoint/);
      const left = (await t.call('GET', '/v1/webhook-endpoints', merchant.sandbox)).json().data;
      assert.deepEqual(left.map((endpoint: any) => endpoint.url), [real.url], 'the temporary endpoint is gone');
    } finally {
      await real.close();
    }
    const live = await runMpay(['--url', base, '--api-key', merchant.live, 'listen', '--port', '0']);
    assert.equal(live.code, 1);
    assert.match(live.stderr, /WEBHOOK_URL_FORBIDDEN|test or sandbox key/);
  });
});
