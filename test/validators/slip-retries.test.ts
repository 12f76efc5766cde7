import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { processProofVerdicts } from '../../src/modules/payments/verdicts.ts';
import { judgeSlip } from '../../src/modules/validators/slips.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { multipart, multipartParts } from '../helpers/files.ts';
import { fund, inFlightSell, merchantCall, MINT_SOURCE, PAY, switchableLedger } from '../helpers/orders.ts';
import { createPendingFunds } from '../helpers/pending-funds.ts';
import { newSlip } from '../helpers/slips.ts';
import { ScriptedValidator } from '../helpers/validator.ts';
import { startFakeEasySlip } from './fake-easyslip.ts';

const KEY = 'easyslip-retry-key';
// Generous: the fake shares the event loop with the gateway and its embedded database, and CI runs another shard
// beside it, so an answer on time must not meet the timeout however loaded the machine (a late one waits twice this).
const TIMEOUT_MS = 3000;
/** The seller's PromptPay id as EasySlip masks it on a slip. */
const PROXY = 'xxx-xxx-5678';

/**
 * DESIGN 3a "Slip identity" on the three slip routes, against a fake EasySlip that (like the real one) answers
 * `duplicate_slip` for a slip it answered before when `checkDuplicate` is set, and that can judge a slip and answer
 * only after the gateway's timeout. The gateway's own retries must never turn a paid slip into a duplicate.
 */
describe('slip verdicts survive retries (payment proof, receiver-confirm, confirm-cash-leg)', () => {
  let t: TestApp;
  let fake: Awaited<ReturnType<typeof startFakeEasySlip>>;
  let merchant: TestMerchant;
  let buyer: TestMerchant;
  const ledger = switchableLedger();
  let order = 0;

  before(async () => {
    fake = await startFakeEasySlip(KEY);
    t = await startTestApp({
      env: {
        RECEIPT_VALIDATOR: 'easyslip',
        EASYSLIP_BASE_URL: fake.url,
        EASYSLIP_API_KEY: KEY,
        EASYSLIP_TIMEOUT_MS: String(TIMEOUT_MS),
        LEDGER_MINT_SOURCE_ACCOUNT: MINT_SOURCE,
      },
      overrides: { ledger },
    });
    ledger.attach(t);
    merchant = await t.createMerchant('Retry merchant');
    buyer = await t.createMerchant('Retry buyer');
    await fund(t, merchant.id, 1_000 * PAY);
    await t.createSeller(thbSeller(100_000_000, '35.00', '0812345678'));
  });
  after(async () => {
    await t.close();
    await fake.close();
  });

  const late = () => ({ kind: 'success' as const, amount_baht: 1000, receiver_proxy: PROXY, late_ms: TIMEOUT_MS * 2 });
  const onTime = () => ({ kind: 'success' as const, amount_baht: 1000, receiver_proxy: PROXY });
  const verdicts = () => processProofVerdicts({ ...t.application.payments, validator: t.application.validator });
  const read = async (id: string, key = merchant.live) => (await t.call('GET', `/v1/payments/${id}`, key)).json().data;

  async function paymentWithSlip(bytes: Buffer, key = merchant.live): Promise<string> {
    const created = await t.call('POST', '/v1/trades', key, {
      order_id: `retry-${++order}`,
      amount: 100_000,
      currency: 'THB',
      return_url: 'https://shop.example/r',
    });
    assert.equal(created.statusCode, 201, created.body);
    const { payload, headers } = multipart('proof', bytes);
    const upload = await t.request({
      method: 'POST',
      url: `/v1/payments/${created.json().data.id}/proof`,
      payload,
      headers: { ...headers, 'x-api-key': key },
    });
    assert.equal(upload.statusCode, 200, upload.body);
    return created.json().data.id;
  }

  it('control: the fake answers duplicate_slip for a slip it already answered when checkDuplicate is set', async () => {
    const image = newSlip().bytes.toString('base64');
    const ask = (checkDuplicate: boolean) =>
      fetch(`${fake.url}/api/v1/verify`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ image, checkDuplicate }),
      });
    fake.answer(onTime(), onTime(), onTime());
    assert.equal((await ask(true)).status, 200);
    assert.deepEqual(await (await ask(true)).json(), { status: 400, message: 'duplicate_slip' });
    assert.equal((await ask(false)).status, 200);
  });

  it('payment proof: the provider answers after the timeout; the retry asks without checkDuplicate and the payment completes', async () => {
    const id = await paymentWithSlip(newSlip().bytes);
    const asked = fake.received.length;
    const judged = fake.answered;
    fake.answer(late());
    assert.equal(await verdicts(), 1);
    assert.equal(fake.answered, judged + 1, 'the provider judged (and remembered) the slip, its answer came too late');
    const proof = await t.db
      .selectFrom('payment_proofs')
      .select(['verdict', 'attempts'])
      .where('payment_id', '=', id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(proof, { verdict: 'timeout', attempts: 1 });
    assert.equal((await read(id)).status, 'confirming');
    assert.equal(fake.received[asked]!['checkDuplicate'], true);
    t.clock.advance(30_000);
    fake.answer(onTime());
    assert.equal(await verdicts(), 1);
    assert.equal(
      fake.received[asked + 1]!['checkDuplicate'],
      false,
      'the retry does not ask the provider to refuse its own earlier question',
    );
    assert.equal((await read(id)).status, 'completed');
  });

  it('payment proof: a verified slip whose completion hit a ledger outage completes on the retry without asking again', async () => {
    const id = await paymentWithSlip(newSlip().bytes);
    ledger.down_for.add('transfer');
    fake.answer(onTime());
    const asked = fake.received.length;
    try {
      assert.equal(await verdicts(), 1);
    } finally {
      ledger.down_for.delete('transfer');
    }
    assert.equal(fake.received.length, asked + 1);
    assert.equal((await read(id)).status, 'confirming');
    t.clock.advance(300_000);
    assert.equal(await verdicts(), 1);
    assert.equal(fake.received.length, asked + 1, 'the stored verdict is reused');
    assert.equal((await read(id)).status, 'completed');
  });

  it('receiver-confirm: a late answer is timeout, the retry verifies; a 502 ledger outage is retried with the stored verdict', async () => {
    const confirm = (id: string, body: unknown) =>
      t.call('POST', `/v1/pending-funds/${id}/receiver-confirm`, merchant.live, body);
    const slip = { receipt_base64: newSlip().bytes.toString('base64'), content_type: 'image/png' };
    const created = await createPendingFunds(t, merchant.id, 2 * PAY);
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().data.id;
    fake.answer(late());
    const first = await confirm(id, slip);
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(first.json().data.outcome, 'timeout');
    fake.answer(onTime());
    const asked = fake.received.length;
    const second = await confirm(id, slip);
    assert.deepEqual(
      [second.statusCode, second.json().data.outcome, second.json().data.pending_funds.status],
      [201, 'verified', 'confirmed'],
    );
    assert.equal(fake.received[asked]!['checkDuplicate'], false);

    const other = (await createPendingFunds(t, merchant.id, 3 * PAY)).json().data.id;
    const slip2 = { receipt_base64: newSlip().bytes.toString('base64'), content_type: 'image/png' };
    ledger.down_for.add('mint');
    fake.answer(onTime());
    const before_outage = fake.received.length;
    try {
      const down = await confirm(other, slip2);
      assert.deepEqual([down.statusCode, down.json().error.code], [502, 'PENDING_FUNDS_LEDGER_UNAVAILABLE']);
    } finally {
      ledger.down_for.delete('mint');
    }
    assert.equal(fake.received.length, before_outage + 1);
    const retry = await confirm(other, slip2);
    assert.deepEqual(
      [retry.statusCode, retry.json().data.outcome, retry.json().data.pending_funds.status],
      [201, 'verified', 'confirmed'],
    );
    assert.equal(fake.received.length, before_outage + 1, 'the stored verdict is reused, the provider not asked again');
  });

  it('confirm-cash-leg: a late answer leaves the leg in flight, the retry completes it; a 502 burn is retried with the stored verdict', async () => {
    const confirm = (id: string, body: unknown) =>
      merchantCall(t, merchant.jwt, 'POST', `/v1/merchant-sell-orders/${id}/confirm-cash-leg`, body, randomUUID());
    // The slip shows the fill's amount (inFlightSell prices the order at 1 satang) paid to the seller's PromptPay.
    const fillSlip = (answer: ReturnType<typeof onTime>) => ({ ...answer, amount_baht: 0.01 });
    const sell = await inFlightSell(t, merchant.jwt, buyer.jwt, 2 * PAY);
    const slip = { receipt_base64: newSlip().bytes.toString('base64'), content_type: 'image/png' };
    fake.answer(fillSlip(late()));
    const first = await confirm(sell.id, slip);
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(
      [first.json().data.status, first.json().data.last_cash_leg_outcome],
      ['cash_leg_in_flight', 'timeout'],
    );
    fake.answer(fillSlip(onTime()));
    const asked = fake.received.length;
    const second = await confirm(sell.id, slip);
    assert.equal(second.json().data.status, 'completed', second.body);
    assert.equal(fake.received[asked]!['checkDuplicate'], false);

    const next = await inFlightSell(t, merchant.jwt, buyer.jwt, 2 * PAY);
    const slip2 = { receipt_base64: newSlip().bytes.toString('base64'), content_type: 'image/png' };
    ledger.down_for.add('burn');
    fake.answer(fillSlip(onTime()));
    const before_outage = fake.received.length;
    try {
      const down = await confirm(next.id, slip2);
      assert.deepEqual([down.statusCode, down.json().error.code], [502, 'SELL_ORDER_LEDGER_UNAVAILABLE']);
    } finally {
      ledger.down_for.delete('burn');
    }
    const retry = await confirm(next.id, slip2);
    assert.equal(retry.json().data.status, 'completed', retry.body);
    assert.equal(fake.received.length, before_outage + 1, 'the stored verdict is reused, the provider not asked again');
  });

  it('a slip accepted anywhere is duplicate_slip everywhere else in its mode, without asking the provider', async () => {
    const { reference, bytes } = newSlip();
    const paid = await paymentWithSlip(bytes);
    fake.answer(onTime());
    assert.equal(await verdicts(), 1);
    assert.equal((await read(paid)).status, 'completed');
    const asked = fake.received.length;
    // The same transfer photographed again (other bytes, same QR) on another live payment: failed, provider not asked.
    const again = await paymentWithSlip(newSlip({ reference, format: 'jpeg', variant: 3 }).bytes);
    assert.equal(await verdicts(), 1);
    const failed = await read(again);
    assert.deepEqual([failed.status, failed.failure_reason], ['failed', 'receipt_duplicate_slip']);
    // ... as a pending fund's receipt, and as a cash leg's evidence.
    const pending = (await createPendingFunds(t, merchant.id, PAY)).json().data.id;
    const confirmed = await t.call('POST', `/v1/pending-funds/${pending}/receiver-confirm`, merchant.live, {
      receipt_base64: newSlip({ reference, variant: 5 }).bytes.toString('base64'),
      content_type: 'image/png',
    });
    assert.deepEqual([confirmed.json().data.outcome, confirmed.json().data.reason], ['failed', 'duplicate_slip']);
    const sell = await inFlightSell(t, merchant.jwt, buyer.jwt, PAY);
    const cash = await merchantCall(
      t,
      merchant.jwt,
      'POST',
      `/v1/merchant-sell-orders/${sell.id}/confirm-cash-leg`,
      { receipt_base64: newSlip({ reference, variant: 6 }).bytes.toString('base64'), content_type: 'image/png' },
      randomUUID(),
    );
    assert.deepEqual(
      [cash.json().data.status, cash.json().data.last_cash_leg_outcome],
      ['cash_leg_in_flight', 'failed'],
    );
    assert.equal(
      fake.received.length,
      asked + 1,
      'only the pending fund intake (another receipt) reached the provider',
    );
    const stored = await t.db
      .selectFrom('slips')
      .select(['owner', 'accepted', 'reason'])
      .where('reference', '=', reference)
      .execute();
    assert.equal(stored.filter((row) => row.accepted).length, 1);
    assert.equal(stored.filter((row) => row.reason === 'duplicate_slip').length, 3);
    assert.ok(
      stored.every((row) => !row.owner.startsWith('payment:') || row.accepted || row.reason === 'duplicate_slip'),
    );
  });

  it('a sandbox check of a live slip, first at the provider, neither claims its reference nor makes the provider refuse the live check', async () => {
    const { reference } = newSlip();
    const sandbox = await paymentWithSlip(newSlip({ reference, variant: 7 }).bytes, merchant.sandbox);
    fake.answer(onTime());
    assert.equal(await verdicts(), 1);
    assert.equal((await read(sandbox, merchant.sandbox)).status, 'completed');
    assert.equal(fake.received.at(-1)!['checkDuplicate'], false, 'a sandbox check never asks for the duplicate flag');

    const asked = fake.received.length;
    const live = await paymentWithSlip(newSlip({ reference, format: 'jpeg', variant: 8 }).bytes);
    fake.answer(onTime(), onTime());
    assert.equal(await verdicts(), 1);
    assert.equal((await read(live)).status, 'completed', 'the genuine live slip is not a duplicate');
    assert.deepEqual(
      fake.received.slice(asked).map((body) => body['checkDuplicate']),
      [true, false],
      'the provider remembered the sandbox check; the live slip was asked again without the flag',
    );

    const live_again = await paymentWithSlip(newSlip({ reference, variant: 9 }).bytes);
    assert.equal(await verdicts(), 1);
    assert.deepEqual(
      [(await read(live_again)).status, (await read(live_again)).failure_reason],
      ['failed', 'receipt_duplicate_slip'],
    );
    assert.equal(fake.received.length, asked + 2, 'a duplicate in its own mode is refused without asking');
  });

  it('10 owners judging one slip at once: exactly one accepts it, the others are duplicate_slip', async () => {
    const { bytes } = newSlip();
    const validator = new ScriptedValidator();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        judgeSlip(
          { db: t.db, clock: t.clock, validator },
          { owner: `cash_leg:race-${index}`, is_sandbox: false, image: bytes, content_type: 'image/png', expect: {} },
        ),
      ),
    );
    const outcomes = answers.map((answer) => `${answer.verdict.outcome}:${answer.verdict.reason ?? ''}`).sort();
    assert.deepEqual(outcomes, [...Array(9).fill('failed:duplicate_slip'), 'verified:']);
  });

  it('easyslip checks each leg against its own amount and payee: both right completes, the whole amount on one leg or the other payee fails', async () => {
    const twoLegs = async () => {
      await t.createSeller(thbSeller(60_000, '34.00', '0811111111'));
      await t.createSeller(thbSeller(40_000, '34.50', '0822222222'));
      const created = await t.call('POST', '/v1/trades', merchant.live, {
        order_id: `retry-${++order}`,
        amount: 100_000,
        currency: 'THB',
        return_url: 'https://shop.example/r',
      });
      assert.deepEqual(
        created.json().data.match_details.map((leg: { allocated_fiat_amount: number }) => leg.allocated_fiat_amount),
        [60_000, 40_000],
        created.body,
      );
      return created.json().data.id as string;
    };
    const sendLeg = async (id: string, leg: number) => {
      const { payload, headers } = multipartParts([
        { name: 'leg', value: String(leg) },
        { name: 'proof', value: newSlip().bytes },
      ]);
      const upload = await t.request({
        method: 'POST',
        url: `/v1/payments/${id}/proof`,
        payload,
        headers: { ...headers, 'x-api-key': merchant.live },
      });
      assert.equal(upload.statusCode, 200, upload.body);
    };
    const paid = await twoLegs();
    await sendLeg(paid, 1);
    fake.answer({ kind: 'success', amount_baht: 600, receiver_proxy: 'xxx-xxx-1111' });
    assert.equal(await verdicts(), 1);
    await sendLeg(paid, 2);
    fake.answer({ kind: 'success', amount_baht: 400, receiver_proxy: 'xxx-xxx-2222' });
    assert.equal(await verdicts(), 1);
    assert.equal((await read(paid)).status, 'completed');

    const whole = await twoLegs();
    await sendLeg(whole, 1);
    fake.answer({ kind: 'success', amount_baht: 1000, receiver_proxy: 'xxx-xxx-1111' });
    assert.equal(await verdicts(), 1);
    assert.deepEqual(
      [(await read(whole)).status, (await read(whole)).failure_reason],
      ['failed', 'receipt_amount_mismatch'],
    );

    const other_payee = await twoLegs();
    await sendLeg(other_payee, 2);
    fake.answer({ kind: 'success', amount_baht: 400, receiver_proxy: 'xxx-xxx-9999' });
    assert.equal(await verdicts(), 1);
    assert.deepEqual(
      [(await read(other_payee)).status, (await read(other_payee)).failure_reason],
      ['failed', 'receipt_receiver_mismatch'],
    );
  });

  it('an accepted verdict is never overwritten by a later check of the same slip (two checks at once)', async () => {
    const owner = `payment:${randomUUID()}:leg:1`;
    const { bytes } = newSlip();
    let calls = 0;
    const racing = {
      kind: 'easyslip' as const,
      async validate() {
        calls += 1;
        if (calls === 1) return { outcome: 'verified' as const, validator_kind: 'easyslip' as const, response: {} };
        await new Promise((resolve) => setTimeout(resolve, 100));
        return {
          outcome: 'failed' as const,
          reason: 'amount_mismatch',
          validator_kind: 'easyslip' as const,
          response: {},
        };
      },
    };
    const deps = { db: t.db, clock: t.clock, validator: racing };
    const question = { owner, is_sandbox: false, image: bytes, content_type: 'image/png', expect: {} };
    const answers = await Promise.all([judgeSlip(deps, question), judgeSlip(deps, question)]);
    assert.equal(calls, 2, 'both checks asked the validator');
    assert.deepEqual(
      answers.map((answer) => answer.verdict.outcome),
      ['verified', 'verified'],
      'the later check answers with the accepted verdict',
    );
    const row = await t.db.selectFrom('slips').selectAll().where('owner', '=', owner).executeTakeFirstOrThrow();
    assert.deepEqual([row.accepted, row.outcome], [true, 'verified']);
  });
});
