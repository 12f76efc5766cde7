import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { completedPayments } from '../helpers/payments.ts';
import { runMpay } from '../helpers/cli.ts';

/** `mpay settlements ...` against a real listening server. */
describe('cli: mpay settlements', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let url: string;

  /** `mpay` in-process with its own output (the refusals it prints to stderr are the test's, not the runner's). */
  async function mpay(...argv: string[]): Promise<{ code: number; out: string }> {
    const result = await runMpay(['--url', url, '--admin-token', ADMIN_TOKEN, '--api-key', merchant.live, ...argv]);
    return { code: result.code, out: result.stdout };
  }

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant();
    await t.createSeller(thbSeller());
    await completedPayments(t, merchant.live, [{ order_id: 'cli-1', amount: 10000 }]);
    url = await t.application.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => t.close());

  it('runs settlement, lists, exports, adjusts and shows the audit log', async () => {
    const run = await mpay('--json', 'settlements', 'run');
    assert.equal(run.code, 0);
    const batch = JSON.parse(run.out).batches[0];
    assert.deepEqual([batch.gross_minor, batch.fee_minor, batch.net_minor], [10000, 150, 9850]);
    const list = await mpay('settlements', 'list');
    assert.match(
      list.out,
      new RegExp(`${batch.id}\\s+live\\s+completed\\s+THB gross 100.00 fee 1.50 net 98.50 \\(1 payments\\)`),
    );
    const csv = await mpay('settlements', 'export', batch.id);
    assert.equal(
      csv.out.split('\r\n')[0],
      'payment_id,order_id,currency,amount_minor,amount,fee_minor,fee,net_minor,net,payment_created_at,completed_at,fee_micro_pay,refunded_minor,refunded',
    );
    const adjust = await mpay(
      '--json',
      'settlements',
      'adjust',
      batch.id,
      '--amount-minor=-50',
      '--reason',
      'bank fee',
    );
    assert.equal(JSON.parse(adjust.out).net_minor, 9800);
    const audit = await mpay('settlements', 'audit-log', batch.id);
    assert.match(audit.out, /settlement\.adjust\s+by cli/);
    assert.equal((await mpay('settlements', 'retry', batch.id)).code, 1, 'a completed batch cannot be retried');
    assert.equal((await mpay('settlements', 'bogus')).code, 2);
  });
});
