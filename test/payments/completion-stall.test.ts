import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accounts } from '../../src/modules/ledger/port.ts';
import { processProofVerdicts } from '../../src/modules/payments/verdicts.ts';
import { scriptedValidator } from '../helpers/validator.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { multipart } from '../helpers/files.ts';
import { newSlip } from '../helpers/slips.ts';

/**
 * A verified payment whose completion the ledger refuses (a quote lock priced the legs below the seller's funding
 * rate) must not stay `confirming` for ever, retried in a silent loop while the rest of the batch waits out the lease.
 * It either never gets that far (allocation reserves only what the seller's PAY covers) or fails visibly:
 * `failed`, `failure_reason` = ledger_insufficient_funds, `payment.failed`, an error log and a metric.
 */
describe('payments: a completion that cannot post ends visibly and never blocks the batch', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let order = 0;

  before(async () => {
    // A verification provider's verdicts (the double checks like easyslip): completion is what this file tests.
    t = await startTestApp({ overrides: { validator: scriptedValidator() } });
    merchant = await t.createMerchant();
  });
  after(() => t.close());

  const trade = (body: Record<string, unknown>) =>
    t.call('POST', '/v1/trades', merchant.live, {
      order_id: `stall-${++order}`,
      currency: 'THB',
      return_url: 'https://shop.example/r',
      ...body,
    });
  async function uploadProof(id: string) {
    const { payload, headers } = multipart('proof', newSlip().bytes);
    const response = await t.request({
      method: 'POST',
      url: `/v1/payments/${id}/proof`,
      payload,
      headers: { ...headers, 'x-api-key': merchant.live },
    });
    assert.equal(response.statusCode, 200, response.body);
  }
  const payment = (id: string) =>
    t.db.selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const eventsOf = async (id: string) =>
    (await t.db.selectFrom('events').select('type').where('resource_id', '=', id).orderBy('seq').execute()).map(
      (e) => e.type,
    );
  const failures = async (reason: string) =>
    (await t.application.verdicts.completion_failures!.get()).values.find((v) => v.labels.reason === reason)?.value ??
    0;

  it('a quote lock below the seller funding rate never leaves the payment confirming', async () => {
    // 20.00 THB of liquidity at 35 THB/PAY is funded with 571,428 micro-PAY; a lock at 30 THB/PAY prices the same
    // 20.00 THB at 666,666 micro-PAY, more than the seller holds.
    const seller = await t.createSeller(thbSeller(2000, '35.00', '0811111111'));
    await t.admin('PUT', '/admin/fx/reference-prices', { base: 'PAY', quote: 'THB', price: '30.00' });
    const lock = await t.call('POST', '/v1/fx/quote-locks', merchant.live, { currency: 'THB' });
    assert.equal(lock.statusCode, 201, lock.body);
    const created = await trade({ amount: 2000, quote_lock_id: lock.json().data.id });
    if (created.statusCode === 409) {
      // The allocation half: only capacity the seller's PAY covers at the lock's rate is offered.
      assert.equal(created.json().error.code, 'PAYMENT_INSUFFICIENT_LIQUIDITY');
      return;
    }
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().data.id;
    await uploadProof(id);
    assert.equal(await processProofVerdicts(t.application.verdicts), 1);
    const after_verdict = await payment(id);
    assert.notEqual(after_verdict.status, 'confirming', 'the payment must reach a terminal status the merchant sees');
    if (after_verdict.status === 'failed') {
      assert.equal(after_verdict.failure_reason, 'ledger_insufficient_funds');
      assert.deepEqual(await eventsOf(id), ['payment.matched', 'payment.confirming', 'payment.failed']);
      const row = await t.db
        .selectFrom('sellers')
        .select('reserved_minor')
        .where('id', '=', seller.id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(row.reserved_minor), 0, 'the failed payment released its liquidity');
      assert.equal(await failures('ledger_insufficient_funds'), 1);
      const read = await t.call('GET', `/v1/payments/${id}`, merchant.live);
      assert.deepEqual(
        [read.json().data.status, read.json().data.failure_reason],
        ['failed', 'ledger_insufficient_funds'],
      );
    } else {
      assert.equal(after_verdict.status, 'completed');
    }
    t.clock.advance(3_600_000);
    assert.equal(await processProofVerdicts(t.application.verdicts), 0, 'nothing is retried: no loop');
    const verify = await t.admin('GET', '/admin/ledger/verify');
    assert.equal(verify.json().data.ok, true, verify.body);
  });

  it('a refused completion fails its payment and the other payment of the same batch still completes', async () => {
    // The best rate (lowest THB per PAY) is allocated first, so both payments take this seller.
    const seller = await t.createSeller(thbSeller(100_000, '34.00', '0822222222'));
    // 1000 THB at 34 = 29,411,764 micro-PAY; leave 1,000,000: enough for 10 THB (294,117) but not for 50 THB (1,470,588).
    await t.application.ledger.transfer({
      key: `test-drain-${seller.id}`,
      kind: 'burn',
      debit_account: accounts.seller(seller.id, false),
      credit_account: accounts.world(false),
      amount_micro_pay: 28_411_764,
    });
    const big = await trade({ amount: 5000 });
    const small = await trade({ amount: 1000 });
    assert.equal(big.statusCode, 201, big.body);
    assert.equal(small.statusCode, 201, small.body);
    assert.deepEqual(
      [big.json().data.match_details[0].seller_id, small.json().data.match_details[0].seller_id],
      [seller.id, seller.id],
    );
    await uploadProof(big.json().data.id);
    t.clock.advance(1);
    await uploadProof(small.json().data.id);
    const before_count = await failures('ledger_insufficient_funds');
    assert.equal(await processProofVerdicts(t.application.verdicts), 2);
    const [poisoned, healthy] = [await payment(big.json().data.id), await payment(small.json().data.id)];
    assert.deepEqual([poisoned.status, poisoned.failure_reason], ['failed', 'ledger_insufficient_funds']);
    assert.equal(healthy.status, 'completed');
    assert.equal(await failures('ledger_insufficient_funds'), before_count + 1);
    assert.equal(await t.application.ledger.balance(accounts.seller(seller.id, false)), 1_000_000 - 294_117);
  });

  it('a verdict that throws releases its claim with backoff; the rest of the batch is applied at once', async () => {
    const first = await trade({ amount: 100 });
    const second = await trade({ amount: 100 });
    await uploadProof(first.json().data.id);
    t.clock.advance(1);
    await uploadProof(second.json().data.id);
    const poisoned_id = first.json().data.id;
    const deps = {
      ...t.application.verdicts,
      completion: {
        async onCompleted(
          trx: Parameters<typeof t.application.payments.completion.onCompleted>[0],
          row: { id: string },
          legs: Parameters<typeof t.application.payments.completion.onCompleted>[2],
        ) {
          if (row.id === poisoned_id) throw new Error('boom');
          return t.application.payments.completion.onCompleted(trx, row as never, legs);
        },
      },
    };
    assert.equal(await processProofVerdicts(deps), 2);
    assert.equal((await payment(poisoned_id)).status, 'confirming');
    assert.equal((await payment(second.json().data.id)).status, 'completed');
    const proof = await t.db
      .selectFrom('payment_proofs')
      .selectAll()
      .where('payment_id', '=', poisoned_id)
      .executeTakeFirstOrThrow();
    assert.equal(proof.claimed_until, null, 'the lease is released, not waited out');
    assert.equal(proof.next_attempt_at.getTime(), t.clock.now().getTime() + 300_000);
    assert.equal(await failures('verdict_error'), 1);
    t.clock.advance(300_000);
    assert.equal(await processProofVerdicts(t.application.verdicts), 1);
    assert.equal((await payment(poisoned_id)).status, 'completed');
  });
});
