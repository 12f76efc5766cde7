import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { runMpay } from '../helpers/cli.ts';

describe('mpay ledger (CLI against a running server)', () => {
  let t: TestApp;
  let url: string;
  let merchant: TestMerchant;
  before(async () => {
    t = await startTestApp();
    await t.application.app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(t.application.app.server.address() as AddressInfo).port}`;
    merchant = await t.createMerchant();
  });
  after(() => t.close());

  /** The real `mpay` entry point in a child process, as an operator runs it. */
  async function run(...args: string[]): Promise<{ code: number; out: string }> {
    const { code, stdout } = await runMpay(['--url', url, '--admin-token', ADMIN_TOKEN, ...args]);
    return { code, out: stdout };
  }

  it('adjust, balance and verify', async () => {
    const adjust = await run(
      '--json',
      'ledger',
      'adjust',
      merchant.id,
      '--direction',
      'credit',
      '--amount',
      '2500000',
      '--reason',
      'cli funding',
      '--key',
      'cli-1',
    );
    assert.equal(adjust.code, 0);
    assert.equal(JSON.parse(adjust.out).available_micro_pay, 2_500_000);
    const balance = await run('ledger', 'balance', `live:merchant:${merchant.id}:available`);
    assert.match(balance.out, /2500000 micro-PAY/);
    const verify = await run('--json', 'ledger', 'verify');
    assert.equal(verify.code, 0);
    const result = JSON.parse(verify.out);
    assert.equal(result.ok, true);
    assert.equal(result.total_balance_micro_pay, 0);
    assert.equal(result.circulation_micro_pay, result.minted_micro_pay - result.burned_micro_pay);
    assert.match((await run('ledger', 'verify')).out, /ledger OK/);
  });

  it('reconcile: 0 with no differences; 1 listing a transfer no business row explains', async () => {
    const clean = await run('ledger', 'reconcile');
    assert.equal(clean.code, 0, clean.out);
    assert.match(clean.out, /no differences/);
    await t.application.ledger.transfer({
      key: 'cli-stray',
      kind: 'mint',
      debit_account: 'live:issuance:world',
      credit_account: `live:merchant:${merchant.id}:available`,
      amount_micro_pay: 5,
    });
    const dirty = await run('ledger', 'reconcile');
    assert.equal(dirty.code, 1, dirty.out);
    // the stray posting, and the world-mint supply it puts above what the rows explain
    assert.match(dirty.out, /2 difference\(s\)[\s\S]*unexpected other cli-stray/);
    assert.match(
      dirty.out,
      /identity pending_funds identity:supply:live:pending_funds: .* is 5 micro-PAY net; the business rows imply 0/,
    );
    const json = await run('--json', 'ledger', 'reconcile');
    assert.deepEqual(
      JSON.parse(json.out).map((d: { key: string }) => d.key),
      ['cli-stray', 'identity:supply:live:pending_funds'],
    );
  });
});
