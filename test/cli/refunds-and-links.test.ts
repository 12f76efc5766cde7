import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { runMpay } from '../helpers/cli.ts';
import { completedPayments } from '../helpers/payments.ts';

/** `mpay refunds ...` and `mpay links ...` with a merchant's API key against a real listening server. */
describe('cli: mpay refunds and mpay links', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let other: TestMerchant;
  let url: string;

  const mpay = (...argv: string[]) => runMpay(['--url', url, '--api-key', merchant.live, ...argv]);

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('CLI Refunds');
    other = await t.createMerchant('CLI Other');
    await t.createSeller(thbSeller());
    url = await t.application.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => t.close());

  it('creates a refund (default: what remains; a repeated --idempotency-key makes one), lists, reads and cancels', async () => {
    const [payment_id] = await completedPayments(t, merchant.live, [{ order_id: 'cli-refund-1', amount: 10_000 }]);
    const key = randomUUID();
    const first = await mpay(
      '--json',
      'refunds',
      'create',
      payment_id!,
      '--amount',
      '25.00',
      '--reason',
      'duplicate',
      '--idempotency-key',
      key,
    );
    assert.equal(first.code, 0, first.stderr);
    const refund = JSON.parse(first.stdout);
    assert.deepEqual(
      [refund.amount, refund.status, refund.reason, refund.funding],
      [2_500, 'requires_action', 'duplicate', 'merchant_transfer'],
    );
    const again = await mpay(
      '--json',
      'refunds',
      'create',
      payment_id!,
      '--amount',
      '25.00',
      '--reason',
      'duplicate',
      '--idempotency-key',
      key,
    );
    assert.equal(JSON.parse(again.stdout).id, refund.id);

    const rest = await mpay('refunds', 'create', payment_id!);
    assert.equal(rest.code, 0, rest.stderr);
    assert.match(
      rest.stdout,
      /^[0-9a-f-]{36} {2}requires_action +75\.00 THB {2}payment .+ {2}merchant_transfer\n {2}send the buyer: http:\/\/gateway\.test\/refunds\/claim\/[A-Za-z0-9]{32} \(until /,
    );
    const over = await mpay('refunds', 'create', payment_id!, '--amount', '0.01');
    assert.equal(over.code, 1);
    assert.match(over.stderr, /409 REFUND_EXCEEDS_PAYMENT/);
    const bad = await mpay('refunds', 'create', payment_id!, '--amount', '1,00');
    assert.equal(bad.code, 2);

    const list = await mpay('refunds', 'list', '--payment', payment_id!);
    assert.equal(list.code, 0, list.stderr);
    assert.equal(list.stdout.trim().split('\n').length, 2);
    assert.match(
      list.stdout,
      new RegExp(`${refund.id}  requires_action +25\\.00 THB  payment ${payment_id}  merchant_transfer  duplicate`),
    );

    const canceled = await mpay('refunds', 'cancel', refund.id);
    assert.equal(canceled.code, 0, canceled.stderr);
    assert.match(canceled.stdout, new RegExp(`^${refund.id}  canceled `));
    const only = await mpay('--json', 'refunds', 'list', '--status', 'canceled');
    assert.deepEqual(
      JSON.parse(only.stdout).data.map((row: { id: string }) => row.id),
      [refund.id],
    );
    const got = await mpay('--json', 'refunds', 'get', refund.id);
    assert.equal(JSON.parse(got.stdout).status, 'canceled');
    const twice = await mpay('refunds', 'cancel', refund.id);
    assert.equal(twice.code, 1);
    assert.match(twice.stderr, /409 REFUND_BAD_STATE/);
    // Another merchant's key does not see it.
    const theirs = await runMpay(['--url', url, '--api-key', other.live, 'refunds', 'get', refund.id]);
    assert.equal(theirs.code, 1);
    assert.match(theirs.stderr, /404 NOT_FOUND/);
    assert.equal((await runMpay(['--url', url, 'refunds', 'list'], { MPAY_API_KEY: undefined })).code, 2);
    assert.equal((await mpay('refunds', 'get')).code, 2);
  });

  it('creates fixed and range links, lists, reads and deactivates them', async () => {
    const fixed = await mpay(
      '--json',
      'links',
      'create',
      '--title',
      'Silk scarf',
      '--currency',
      'thb',
      '--amount',
      '1450.00',
    );
    assert.equal(fixed.code, 0, fixed.stderr);
    const link = JSON.parse(fixed.stdout);
    assert.deepEqual([link.amount, link.currency, link.reusable, link.state], [145_000, 'THB', false, 'open']);
    const range = await mpay(
      'links',
      'create',
      '--title',
      'Tip jar',
      '--currency',
      'THB',
      '--min',
      '20',
      '--max',
      '2000',
      '--reusable',
      '--max-payments',
      '50',
      '--expires-at',
      '2099-12-31T00:00:00Z',
    );
    assert.equal(range.code, 0, range.stderr);
    assert.match(
      range.stdout,
      /^plink_[0-9a-f]{32} {2}open +20\.00-2000\.00 THB {2}paid 0\/50 {2}Tip jar\n {2}http:\/\/gateway\.test\/pay\/plink_[0-9a-f]{32}\n$/,
    );
    const range_id = /^(plink_[0-9a-f]{32})/.exec(range.stdout)![1]!;
    const api = (await t.call('GET', `/v1/payment-links/${range_id}`, merchant.live)).json().data;
    assert.deepEqual(
      [api.amount_range.min, api.amount_range.max, api.reusable, api.max_payments, api.expires_at],
      [2_000, 200_000, true, 50, '2099-12-31T00:00:00.000Z'],
    );
    for (const args of [
      ['--title', 'X', '--currency', 'THB'],
      ['--title', 'X', '--currency', 'THB', '--amount', '1', '--min', '1', '--max', '2'],
      ['--title', 'X', '--currency', 'THB', '--min', '1'],
      ['--currency', 'THB', '--amount', '1'],
    ]) {
      const refused = await mpay('links', 'create', ...args);
      assert.equal(refused.code, 2, args.join(' '));
    }
    const server_refused = await mpay(
      'links',
      'create',
      '--title',
      'X',
      '--currency',
      'THB',
      '--min',
      '50',
      '--max',
      '10',
    );
    assert.equal(server_refused.code, 1);
    assert.match(server_refused.stderr, /400 VALIDATION_ERROR/);

    const list = await mpay('--json', 'links', 'list');
    // Both (the test clock stands still: the two share a creation time, so the page orders them by id).
    assert.deepEqual(
      JSON.parse(list.stdout)
        .data.map((row: { id: string }) => row.id)
        .sort(),
      [range_id, link.id].sort(),
    );
    const got = await mpay('links', 'get', link.id);
    assert.match(got.stdout, new RegExp(`^${link.id}  open +1450\\.00 THB  paid 0/1  Silk scarf`));
    const off = await mpay('links', 'deactivate', link.id);
    assert.equal(off.code, 0, off.stderr);
    assert.match(off.stdout, new RegExp(`^${link.id}  inactive `));
    assert.equal((await t.call('GET', `/v1/payment-links/${link.id}`, merchant.live)).json().data.active, false);
    const theirs = await runMpay(['--url', url, '--api-key', other.live, 'links', 'get', link.id]);
    assert.match(theirs.stderr, /404 NOT_FOUND/);
  });
});
