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
    const result = await runMpay([
      '--url',
      base,
      '--api-key',
      merchant.sandbox,
      '--json',
      'sandbox',
      'trigger',
      'matched_partial_fill',
      '--amount',
      '20000',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const data = JSON.parse(result.stdout);
    assert.equal(data.scenario, 'matched_partial_fill');
    assert.equal(data.payment.status, 'completed');
    assert.deepEqual(
      data.payment.match_details.map((leg: any) => leg.allocated_fiat_amount),
      [13000, 7000],
    );
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
    for (const prefix of [
      'payment.',
      'sell_order.',
      'buy_order.',
      'gateway.dispute.',
      'pending_funds.',
      'settlement.',
    ]) {
      assert.ok(
        event_types.some((type: string) => type.startsWith(prefix)),
        prefix,
      );
    }
    const sell = await runMpay([
      '--url',
      base,
      '--api-key',
      merchant.sandbox,
      '--json',
      'sandbox',
      'trigger',
      'sell_order.completed',
    ]);
    assert.equal(sell.code, 0, sell.stderr);
    const emitted = JSON.parse(sell.stdout);
    assert.equal(emitted.type, 'sell_order.completed');
    assert.equal(emitted.event.sandbox, true);
    assert.equal(emitted.event.data.status, 'completed');
    const paid = await runMpay([
      '--url',
      base,
      '--api-key',
      merchant.sandbox,
      '--json',
      'sandbox',
      'trigger',
      'payment.failed',
    ]);
    assert.equal(JSON.parse(paid.stdout).payment.status, 'failed');
    const live = await runMpay(['--url', base, '--api-key', merchant.live, 'sandbox', 'trigger', 'buy_order.matched']);
    assert.equal(live.code, 1);
    assert.match(live.stderr, /403 SANDBOX_ONLY/);
  });

  it('listen reads the sandbox event stream (no endpoint registered, nothing listening here): filters, prints the secret and JSON, forwards signed', async () => {
    const drain = async () => {
      for (let handled = -1; handled !== 0; )
        handled = await dispatchDueWebhooks({ ...t.application.webhooks.dispatch, timeout_ms: 5000 });
    };
    await drain();
    // The merchant's real sandbox endpoint: listen must leave it alone.
    const real = await startReceiver();
    try {
      assert.equal((await t.call('PUT', '/v1/webhook-endpoint', merchant.sandbox, { url: real.url })).statusCode, 200);
      const endpoints_before = (await t.call('GET', '/v1/webhook-endpoints', merchant.sandbox)).json().data;
      const child = spawn(
        process.execPath,
        [
          CLI,
          '--url',
          base,
          '--api-key',
          merchant.sandbox,
          'listen',
          '--forward-to',
          receiver.url,
          '--events',
          'payment.completed,sell_order.completed',
          '--print-json',
        ],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      try {
        while (!output.includes('Ready.')) await once(child.stdout, 'data');
        const secret = /signing secret is (whsec_\S+)/.exec(output)?.[1];
        assert.ok(secret, output);
        assert.deepEqual(
          (await t.call('GET', '/v1/webhook-endpoints', merchant.sandbox)).json().data,
          endpoints_before,
          'no endpoint registered',
        );
        assert.deepEqual((await t.call('GET', '/v1/webhook-endpoints', merchant.live)).json().data, [], 'nothing live');

        const before_ms = performance.now();
        await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, { scenario: 'matched_then_completed' });
        assert.equal(
          (await t.call('POST', '/v1/sandbox/events', merchant.sandbox, { type: 'sell_order.completed' })).statusCode,
          201,
        );
        assert.equal(
          (await t.call('POST', '/v1/sandbox/events', merchant.sandbox, { type: 'buy_order.created' })).statusCode,
          201,
        );
        const hooks = await receiver.waitFor(2);
        assert.ok(performance.now() - before_ms < 5_000, 'forwarded without the dispatcher');
        for (const hook of hooks) verifyWebhook(hook.raw, hook.headers, secret, { now: t.clock.now() });
        assert.deepEqual(
          hooks.map((hook) => hook.body['type']).sort(),
          ['payment.completed', 'sell_order.completed'],
          'only the subscribed types',
        );
        assert.ok(hooks.every((hook) => hook.body['sandbox'] === true));
        await drain();
        assert.deepEqual(
          real.received.map((hook) => hook.body['type']).sort(),
          ['buy_order.created', 'payment.completed', 'payment.matched', 'sell_order.completed'],
          'the real endpoint got everything',
        );
        while (!output.includes('sell_order.completed evt_')) await once(child.stdout, 'data');
        assert.match(output, /--> payment\.completed evt_\w+ payment sbx_\S+ \[sandbox\] {2}\[200\]/);
        assert.match(output, /^\{"[^\n]*"type":"payment\.completed"/m, '--print-json prints each event');
      } finally {
        child.kill('SIGTERM');
        await once(child, 'close');
      }
      assert.match(output, /Stopped\./);
    } finally {
      await real.close();
    }
    const live = await runMpay(['--url', base, '--api-key', merchant.live, 'listen']);
    assert.equal(live.code, 1);
    assert.match(live.stderr, /test or sandbox key/);
  });

  it('the stream: 401 without a key, 403 SANDBOX_ONLY for a live key; events after Last-Event-ID on a reconnect, signed with the secret kept', async () => {
    const stream = (key: string | undefined, headers: Record<string, string> = {}) =>
      fetch(`${base}/v1/sandbox/events/stream`, { headers: { ...(key ? { 'x-api-key': key } : {}), ...headers } });
    assert.equal((await stream(undefined)).status, 401);
    const live = await stream(merchant.live);
    assert.equal(live.status, 403);
    assert.equal(((await live.json()) as any).error.code, 'SANDBOX_ONLY');

    const first = await t.call('POST', '/v1/sandbox/events', merchant.sandbox, { type: 'buy_order.created' });
    assert.equal(first.statusCode, 201);
    const seq = (
      await t.db
        .selectFrom('events')
        .select('seq')
        .where('merchant_id', '=', merchant.id)
        .orderBy('seq', 'desc')
        .limit(2)
        .execute()
    ).map((row) => Number(row.seq));
    const secret = `whsec_${Buffer.from('a'.repeat(32)).toString('base64')}`;
    const controller = new AbortController();
    const resumed = await fetch(`${base}/v1/sandbox/events/stream`, {
      headers: { 'x-api-key': merchant.sandbox, 'last-event-id': String(seq[1]), 'x-listen-secret': secret },
      signal: controller.signal,
    });
    assert.equal(resumed.status, 200);
    assert.match(resumed.headers.get('content-type') ?? '', /^text\/event-stream/);
    let text = '';
    const decoder = new TextDecoder();
    for await (const chunk of resumed.body!) {
      text += decoder.decode(chunk, { stream: true });
      if (text.includes('event: webhook')) break;
    }
    controller.abort();
    assert.match(text, new RegExp(`"secret":"${secret.replace(/[+/=]/g, '\\$&')}"`));
    const data = JSON.parse(/event: webhook\ndata: (.*)\n/.exec(text)![1]!);
    assert.match(text, new RegExp(`id: ${seq[0]}\nevent: webhook`));
    assert.equal(data.type, 'buy_order.created');
    verifyWebhook(Buffer.from(data.body), data.headers, secret, { now: t.clock.now() });
  });
});
