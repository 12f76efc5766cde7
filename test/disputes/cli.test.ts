import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { runMpay } from '../helpers/cli.ts';
import { createSell, fund, inFlightSell, merchantCall, MINT_SOURCE, PAY, sellBody } from '../helpers/orders.ts';
import { newSlip } from '../helpers/slips.ts';

/** Runs `mpay` as a separate process against the test server. */
const mpay = (url: string, ...args: string[]) => runMpay(['--url', url, ...args]);

describe('mpay orders: disputes from the command line', () => {
  let t: TestApp;
  let url: string;
  before(async () => {
    t = await startTestApp({ env: { LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE } });
    url = await t.application.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => t.close());

  it('lists, investigates, escalates and resolves a dispute; errors keep their code', async () => {
    const m = await t.createMerchant('CLI payouts');
    await fund(t, m.id, 10 * PAY);
    const sell = await createSell(t, m.jwt, sellBody(PAY));
    const id = (
      await merchantCall(t, m.jwt, 'POST', '/v1/merchant-disputes', { sell_order_id: sell.id, notes: 'via cli' })
    ).json().data.id as string;
    const list = await mpay(url, 'orders', 'disputes', '--status', 'opened');
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`${id}\\s+opened`));
    assert.equal((await mpay(url, 'orders', 'investigate', id, '--notes', 'checking')).code, 0);
    assert.equal((await mpay(url, 'orders', 'escalate', id)).code, 0);
    const resolved = await mpay(url, '--json', 'orders', 'resolve', id, '--outcome', 'no_action');
    assert.equal(resolved.code, 0, resolved.stderr);
    const data = JSON.parse(resolved.stdout);
    assert.equal(data.status, 'resolved');
    assert.deepEqual(data.events.map((e: { actor_user_id: string }) => e.actor_user_id).slice(1), [
      'cli',
      'cli',
      'cli',
    ]);
    const shown = await mpay(url, 'orders', 'dispute', id);
    assert.match(shown.stdout, /#4 .* resolved by cli/);
    const again = await mpay(url, 'orders', 'resolve', id, '--outcome', 'no_action');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /409 DISPUTE_BAD_STATE/);
    assert.equal((await mpay(url, 'orders', 'resolve', id)).code, 2);
  });

  it('opens a chargeback on a completed sell order (mpay orders chargeback); a pending one is 409', async () => {
    const seller = await t.createMerchant('CLI chargeback seller');
    const buyer = await t.createMerchant('CLI chargeback buyer');
    await fund(t, seller.id, 10 * PAY);
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, 2 * PAY);
    const done = await merchantCall(t, seller.jwt, 'POST', `/v1/merchant-sell-orders/${sell.id}/confirm-cash-leg`, {
      receipt_base64: newSlip().bytes.toString('base64'),
      content_type: 'image/png',
    });
    assert.equal(done.json().data.status, 'completed', done.body);
    const opened = await mpay(
      url,
      '--json',
      'orders',
      'chargeback',
      sell.id,
      '--notes',
      'bank recall',
      '--reference',
      'CB-7',
    );
    assert.equal(opened.code, 0, opened.stderr);
    const data = JSON.parse(opened.stdout);
    assert.equal(data.kind, 'chargeback');
    assert.equal(data.status, 'opened');
    assert.equal(data.events[0].actor_user_id, 'cli');
    assert.equal(data.events[0].details.reference, 'CB-7');
    const audit = await t.db
      .selectFrom('admin_audit_log')
      .select(['action', 'actor_user_id'])
      .where('target_id', '=', data.id)
      .execute();
    assert.deepEqual(audit, [{ action: 'dispute.chargeback_opened', actor_user_id: 'cli' }]);
    const pending = await createSell(t, seller.jwt, sellBody(PAY));
    const refused = await mpay(url, 'orders', 'chargeback', pending.id, '--notes', 'too early');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /409 DISPUTE_BAD_STATE/);
    assert.equal((await mpay(url, 'orders', 'chargeback', pending.id)).code, 2);
  });
});
