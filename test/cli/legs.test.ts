import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { runMpay } from '../helpers/cli.ts';
import { drainVerdicts, uploadProof } from '../helpers/payments.ts';
import { newSlip } from '../helpers/slips.ts';

/** `mpay legs` (DESIGN 3b, 4): the operator lists the legs waiting for their seller and decides for it, audited. */
describe('mpay legs over GET /admin/legs and the admin leg decisions', () => {
  let t: TestApp;
  let url: string;
  let merchant: TestMerchant;
  let order = 0;
  const mpay = (...args: string[]) => runMpay(['--url', url, ...args]);

  before(async () => {
    t = await startTestApp();
    url = await t.application.app.listen({ port: 0, host: '127.0.0.1' });
    merchant = await t.createMerchant('CLI legs');
    await t.createSeller(thbSeller(1_000_000, '35.00', '0811111111'));
  });
  after(() => t.close());

  /** A live payment whose one leg waits for its seller (slip_qr checked the slip). */
  async function waitingLeg(): Promise<{ id: string; reference: string }> {
    const created = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: `cli-leg-${++order}`,
      amount: 10_000,
      currency: 'THB',
      return_url: 'https://shop.example/r',
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().data.id as string;
    const [slip] = await uploadProof(t, merchant.live, id, [newSlip()]);
    await drainVerdicts(t);
    return { id, reference: slip!.reference };
  }
  const status = async (id: string) => (await t.call('GET', `/v1/payments/${id}`, merchant.live)).json().data.status;

  it('lists the waiting legs, confirms one (the payment completes) and rejects another with its reason (it fails)', async () => {
    const paid = await waitingLeg();
    const unpaid = await waitingLeg();

    const listed = await mpay('--json', 'legs', 'list', '--status', 'awaiting_payee');
    assert.equal(listed.code, 0, listed.stderr);
    const rows = JSON.parse(listed.stdout).data as { payment_id: string; status: string; reference: string }[];
    assert.deepEqual(
      rows.map((row) => [row.payment_id, row.status, row.reference]).sort(),
      [
        [unpaid.id, 'awaiting_payee', unpaid.reference],
        [paid.id, 'awaiting_payee', paid.reference],
      ].sort(),
    );
    const human = await mpay('legs', 'list', '--status', 'awaiting_payee');
    assert.match(human.stdout, new RegExp(`^${paid.id} leg 1  awaiting_payee .* ref 004:${paid.reference}$`, 'm'));

    const confirmed = await mpay('--json', 'legs', 'confirm', paid.id, '1');
    assert.equal(confirmed.code, 0, confirmed.stderr);
    assert.deepEqual(
      [JSON.parse(confirmed.stdout).status, JSON.parse(confirmed.stdout).decided_by],
      ['verified', 'operator'],
    );
    assert.equal(await status(paid.id), 'completed');

    const rejected = await mpay('legs', 'reject', unpaid.id, '1', '--reason', 'no money in the account');
    assert.equal(rejected.code, 0, rejected.stderr);
    assert.match(rejected.stdout, /^rejected: .* rejected /);
    assert.equal(await status(unpaid.id), 'failed');
    const [decided] = (await t.admin('GET', '/admin/legs?status=rejected')).json().data;
    assert.deepEqual(
      [decided.payment_id, decided.reason, decided.decided_by],
      [unpaid.id, 'no money in the account', 'operator'],
    );

    const empty = await mpay('legs', 'list', '--status', 'awaiting_payee');
    assert.deepEqual([empty.code, empty.stdout], [0, 'no legs\n']);
  });

  it('a leg no longer waiting is 409 LEG_NOT_AWAITING_PAYEE with exit 1; bad arguments exit 2 before any request', async () => {
    const { id } = await waitingLeg();
    assert.equal((await mpay('legs', 'confirm', id, '1')).code, 0);
    const again = await mpay('legs', 'confirm', id, '1');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /409 LEG_NOT_AWAITING_PAYEE/);
    const unknown = await mpay('legs', 'reject', id, '7', '--reason', 'x');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /404 NOT_FOUND/);
    for (const args of [
      ['legs', 'reject', id, '1'],
      ['legs', 'confirm', id],
      ['legs', 'confirm', id, 'one'],
      ['legs', 'frobnicate'],
    ]) {
      const usage = await mpay(...args);
      assert.equal(usage.code, 2, `${args.join(' ')}: ${usage.stderr}`);
    }
  });
});
