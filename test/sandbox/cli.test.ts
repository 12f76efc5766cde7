import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { verifyWebhook } from '../../src/webhook-verify.js';
import { dispatchDueWebhooks } from '../../src/modules/webhooks/dispatcher.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

const CLI = new URL('../../src/cli/main.ts', import.meta.url).pathname;

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

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
    const result = await runCli(['--url', base, '--api-key', merchant.sandbox, '--json', 'sandbox', 'trigger', 'matched_partial_fill', '--amount', '20000']);
    assert.equal(result.code, 0, result.stderr);
    const data = JSON.parse(result.stdout);
    assert.equal(data.scenario, 'matched_partial_fill');
    assert.equal(data.payment.status, 'completed');
    assert.deepEqual(data.payment.match_details.map((leg: any) => leg.allocated_fiat_amount), [13000, 7000]);
    const human = await runCli(['--url', base, '--api-key', merchant.test, 'sandbox', 'trigger', 'expired']);
    assert.match(human.stdout, /^expired: payment sbx_\S+ is expired/);
    const live = await runCli(['--url', base, '--api-key', merchant.live, 'sandbox', 'trigger', 'expired']);
    assert.equal(live.code, 1);
    assert.match(live.stderr, /403 SANDBOX_ONLY/);
    const unknown = await runCli(['--url', base, '--api-key', merchant.sandbox, 'sandbox', 'trigger', 'refund']);
    assert.equal(unknown.code, 2);
  });

  it('listen --register receives the webhooks and forwards them with the signature intact', async () => {
    const drain = async () => {
      for (let handled = -1; handled !== 0; ) handled = await dispatchDueWebhooks({ ...t.application.webhooks.dispatch, timeout_ms: 5000 });
    };
    await drain(); // the earlier triggers' events: no endpoint yet, so skipped
    const secret = (await t.call('POST', '/v1/webhook-endpoint/rotate-secret', merchant.live)).json().data.secret;
    const child = spawn(process.execPath, [CLI, '--url', base, '--api-key', merchant.sandbox, 'listen', '--forward-to', receiver.url, '--port', '0', '--register'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      while (!output.includes('Ready.')) await once(child.stdout, 'data');
      const endpoint = (await t.call('GET', '/v1/webhook-endpoint', merchant.live)).json().data.url;
      assert.match(endpoint, /^http:\/\/127\.0\.0\.1:\d+\/$/);
      await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, { scenario: 'matched_then_completed' });
      await drain();
      const hooks = await receiver.waitFor(2);
      for (const hook of hooks) verifyWebhook(hook.raw, hook.headers, secret, { now: t.clock.now() });
      assert.deepEqual(hooks.map((hook) => hook.body['type']), ['payment.matched', 'payment.completed']);
      const deliveries = (await t.call('GET', '/v1/webhook-deliveries', merchant.sandbox)).json().data;
      assert.deepEqual(deliveries.filter((delivery: any) => delivery.status === 'succeeded').length, 2);
      while (!output.includes('payment.completed')) await once(child.stdout, 'data');
      assert.match(output, /--> payment\.matched evt_\w+ payment sbx_\S+ \[sandbox\]  \[200\]/);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'close');
    }
  });
});
