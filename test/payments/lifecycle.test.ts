import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { expireDuePayments } from '../../src/modules/payments/service.ts';
import { processProofVerdicts } from '../../src/modules/payments/verdicts.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { multipart, uniquePng } from '../helpers/files.ts';
import { scriptedValidator } from '../helpers/validator.ts';

describe('payment lifecycle: read, list, expiry, cancel, proof, verdicts', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let other: TestMerchant;
  let seller_id: string;
  const validator = scriptedValidator();
  let order = 0;

  before(async () => {
    t = await startTestApp({ env: { PROOF_MAX_BYTES: '4096' }, overrides: { validator } });
    merchant = await t.createMerchant('A');
    other = await t.createMerchant('B');
    seller_id = (await t.createSeller(thbSeller(100_000_000))).id;
  });
  after(() => t.close());

  async function newPayment(key = merchant.live, extra: Record<string, unknown> = {}) {
    const response = await t.call('POST', '/v1/trades', key, {
      order_id: `o-${++order}`,
      amount: 10_000,
      currency: 'THB',
      return_url: 'https://shop.example/return',
      ...extra,
    });
    assert.equal(response.statusCode, 201, response.body);
    return response.json().data as { id: string; status: string; expires_at: string };
  }
  const reserved = async () =>
    await t.db
      .selectFrom('sellers')
      .select(['reserved_minor', 'liquidity_minor'])
      .where('id', '=', seller_id)
      .executeTakeFirstOrThrow();
  const eventsOf = async (id: string) =>
    (await t.db.selectFrom('events').select('type').where('resource_id', '=', id).orderBy('seq').execute()).map(
      (e) => e.type,
    );
  async function uploadProof(id: string, bytes: Buffer, key: string | null = merchant.live) {
    const { payload, headers } = multipart('proof', bytes);
    return t.request({
      method: 'POST',
      url: `/v1/payments/${id}/proof`,
      payload,
      headers: { ...headers, ...(key ? { 'x-api-key': key } : {}) },
    });
  }

  it('GET reads an own payment; another merchant, the other mode or an unknown id is 404; a bad id is 400', async () => {
    const payment = await newPayment();
    const own = await t.call('GET', `/v1/payments/${payment.id}`, merchant.live);
    assert.equal(own.statusCode, 200);
    assert.equal(own.json().data.id, payment.id);
    assert.equal((await t.call('GET', `/v1/trades/${payment.id}`, merchant.live)).json().data.id, payment.id);
    for (const key of [other.live, merchant.sandbox, merchant.test]) {
      const response = await t.call('GET', `/v1/payments/${payment.id}`, key);
      assert.equal(response.statusCode, 404);
      assert.equal(response.json().error.code, 'NOT_FOUND');
    }
    assert.equal((await t.call('GET', `/v1/payments/${randomUUID()}`, merchant.live)).statusCode, 404);
    const bad = await t.call('GET', '/v1/payments/not-a-uuid', merchant.live);
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.code, 'VALIDATION_ERROR');
    assert.equal((await t.call('GET', `/v1/payments/${payment.id}`, undefined)).statusCode, 401);
    const sandbox = await newPayment(merchant.sandbox);
    assert.equal((await t.call('GET', `/v1/payments/${sandbox.id}`, merchant.sandbox)).statusCode, 200);
    assert.equal((await t.call('GET', `/v1/payments/${sandbox.id}`, merchant.live)).statusCode, 404);
  });

  it('lazy expiry: GET after expires_at moves matched to expired once, with payment.expired, and releases liquidity', async () => {
    const before_reserved = (await reserved()).reserved_minor;
    const payment = await newPayment(merchant.live, { expires_in_seconds: 60 });
    assert.equal((await reserved()).reserved_minor, before_reserved + 10_000);
    t.clock.advance(59_000);
    assert.equal((await t.call('GET', `/v1/payments/${payment.id}`, merchant.live)).json().data.status, 'matched');
    t.clock.advance(1_000);
    const [first, second] = await Promise.all([
      t.call('GET', `/v1/payments/${payment.id}`, merchant.live),
      t.call('GET', `/v1/payments/${payment.id}`, merchant.live),
    ]);
    assert.equal(first.json().data.status, 'expired');
    assert.equal(second.json().data.status, 'expired');
    assert.deepEqual(await eventsOf(payment.id), ['payment.matched', 'payment.expired']);
    assert.equal((await reserved()).reserved_minor, before_reserved);
    const row = await t.db
      .selectFrom('payments')
      .select('expired_at')
      .where('id', '=', payment.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.expired_at?.toISOString(), t.clock.now().toISOString());
  });

  it('cancel: 200 from created or matching (liquidity released, payment.cancelled), 409 PAYMENT_BAD_STATE otherwise', async () => {
    // Live creation matches in its own transaction, so a payment is only seen in created/matching when written
    // that way by another path; the state machine is exercised on such rows directly.
    for (const status of ['created', 'matching'] as const) {
      const id = randomUUID();
      const now = t.clock.now();
      await t.db
        .insertInto('payments')
        .values({
          id,
          merchant_id: merchant.id,
          is_sandbox: false,
          order_id: `raw-${id}`,
          amount_minor: 500,
          currency: 'THB',
          payment_method: 'promptpay',
          return_url: 'https://shop.example/r',
          status,
          metadata: '{}',
          expires_at: new Date(now.getTime() + 900_000),
          created_at: now,
        })
        .execute();
      const response = await t.call('POST', `/v1/payments/${id}/cancel`, merchant.live);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().data.status, 'cancelled');
      assert.deepEqual(await eventsOf(id), ['payment.cancelled']);
      const again = await t.call('POST', `/v1/payments/${id}/cancel`, merchant.live);
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().error.code, 'PAYMENT_BAD_STATE');
    }
    const matched = await newPayment();
    const refused = await t.call('POST', `/v1/payments/${matched.id}/cancel`, merchant.live);
    assert.equal(refused.statusCode, 409);
    assert.equal(refused.json().error.code, 'PAYMENT_BAD_STATE');
    assert.equal((await t.call('GET', `/v1/payments/${matched.id}`, merchant.live)).json().data.status, 'matched');
    assert.equal((await t.call('POST', `/v1/payments/${matched.id}/cancel`, other.live)).statusCode, 404);
    assert.equal((await t.call('POST', `/v1/payments/${matched.id}/cancel`, undefined)).statusCode, 401);
    assert.equal((await t.call('POST', '/v1/payments/nope/cancel', merchant.live)).statusCode, 400);
  });

  it('proof upload moves matched to confirming; the verified verdict completes it, consumes liquidity and emits payment.completed', async () => {
    const payment = await newPayment();
    const before = await reserved();
    const response = await uploadProof(payment.id, await uniquePng());
    assert.equal(response.statusCode, 200, response.body);
    const result = response.json().data;
    assert.equal(result.status, 'confirming');
    assert.equal(result.proof.content_type, 'image/png');
    assert.match(result.proof.sha256, /^[0-9a-f]{64}$/);
    assert.equal((await t.call('GET', `/v1/payments/${payment.id}`, merchant.live)).json().data.status, 'confirming');

    validator.next = ['verified'];
    assert.equal(await processProofVerdicts({ ...t.application.payments, validator }), 1);
    const done = (await t.call('GET', `/v1/payments/${payment.id}`, merchant.live)).json().data;
    assert.equal(done.status, 'completed');
    assert.equal(done.completed_at, t.clock.now().toISOString());
    assert.deepEqual(await eventsOf(payment.id), ['payment.matched', 'payment.confirming', 'payment.completed']);
    const after = await reserved();
    assert.equal(after.reserved_minor, before.reserved_minor - 10_000);
    assert.equal(after.liquidity_minor, before.liquidity_minor - 10_000);
    assert.equal(await processProofVerdicts({ ...t.application.payments, validator }), 0, 'nothing left to check');
  });

  it('a failed verdict fails the payment with a reason and releases liquidity; unverified is retried with backoff', async () => {
    const failing = await newPayment();
    const retried = await newPayment();
    const before = await reserved();
    assert.equal((await uploadProof(failing.id, await uniquePng())).statusCode, 200);
    assert.equal((await uploadProof(retried.id, await uniquePng())).statusCode, 200);
    validator.next = ['failed', 'unverified'];
    assert.equal(await processProofVerdicts({ ...t.application.payments, validator }), 2);
    const failed = (await t.call('GET', `/v1/payments/${failing.id}`, merchant.live)).json().data;
    assert.equal(failed.status, 'failed');
    assert.equal(failed.failure_reason, 'receipt_amount_mismatch');
    assert.deepEqual(await eventsOf(failing.id), ['payment.matched', 'payment.confirming', 'payment.failed']);
    assert.equal((await t.call('GET', `/v1/payments/${retried.id}`, merchant.live)).json().data.status, 'confirming');
    assert.equal((await reserved()).reserved_minor, before.reserved_minor - 10_000);

    assert.equal(await processProofVerdicts({ ...t.application.payments, validator }), 0, 'backoff: not due yet');
    t.clock.advance(30_000);
    validator.next = ['verified'];
    assert.equal(await processProofVerdicts({ ...t.application.payments, validator }), 1);
    assert.equal((await t.call('GET', `/v1/payments/${retried.id}`, merchant.live)).json().data.status, 'completed');
    const proof = await t.db
      .selectFrom('payment_proofs')
      .selectAll()
      .where('payment_id', '=', retried.id)
      .executeTakeFirstOrThrow();
    assert.equal(proof.attempts, 2);
    assert.equal(proof.verdict, 'verified');
  });

  it('a provider that never answers is no rejection: the slip is retried with backoff for PROOF_CHECK_HOURS, then waits for its payee, and the payment never expires', async () => {
    const payment = await newPayment();
    assert.equal((await uploadProof(payment.id, await uniquePng())).statusCode, 200);
    const started = t.clock.now().getTime();
    const proof = () =>
      t.db
        .selectFrom('payment_proofs')
        .select(['verdict', 'attempts', 'next_attempt_at'])
        .where('payment_id', '=', payment.id)
        .executeTakeFirstOrThrow();
    let asked = 0;
    while (asked < 100) {
      validator.next = [asked % 2 === 0 ? 'timeout' : 'unverified'];
      assert.equal(await processProofVerdicts(t.application.verdicts), 1);
      asked += 1;
      const row = await proof();
      if (row.verdict === 'awaiting_payee') break;
      assert.ok(['timeout', 'unverified'].includes(row.verdict ?? ''), String(row.verdict));
      const read = (await t.call('GET', `/v1/payments/${payment.id}`, merchant.live)).json().data;
      assert.deepEqual([read.status, read.match_details[0].proof.status], ['confirming', 'checking']);
      t.clock.set(row.next_attempt_at);
    }
    assert.ok(asked > 5 && asked < 40, `asked ${asked} times over the day (backoff, capped at an hour)`);
    assert.ok(t.clock.now().getTime() >= started + 24 * 3_600_000, 'waits only once the check hours are over');
    const waiting = (await t.call('GET', `/v1/payments/${payment.id}`, merchant.live)).json().data;
    assert.deepEqual(
      [waiting.status, waiting.match_details[0].proof.status, waiting.failure_reason],
      ['confirming', 'awaiting_payee', null],
    );
    await t.event(payment.id, 'leg.awaiting_payee');
    t.clock.advance(7 * 24 * 3_600_000);
    await expireDuePayments(t.application.payments);
    assert.equal((await t.call('GET', `/v1/payments/${payment.id}`, merchant.live)).json().data.status, 'confirming');
  });

  it('proof: 409 outside matched/payment_pending, 409 PROOF_DUPLICATE for a file used elsewhere, 400 missing or not an image, 413 too large', async () => {
    const payment = await newPayment();
    const bytes = await uniquePng();
    assert.equal((await uploadProof(payment.id, bytes)).statusCode, 200);
    const twice = await uploadProof(payment.id, await uniquePng());
    assert.equal(twice.statusCode, 409);
    assert.equal(twice.json().error.code, 'PAYMENT_BAD_STATE');

    const second = await newPayment();
    const reused = await uploadProof(second.id, bytes);
    assert.equal(reused.statusCode, 409);
    assert.equal(reused.json().error.code, 'PROOF_DUPLICATE');

    const text = await uploadProof(second.id, Buffer.from('this is not an image at all'));
    assert.equal(text.statusCode, 400);
    assert.equal(text.json().error.code, 'PROOF_UNSUPPORTED_TYPE');

    const wrong_field = multipart('file', await uniquePng());
    const missing = await t.request({
      method: 'POST',
      url: `/v1/payments/${second.id}/proof`,
      payload: wrong_field.payload,
      headers: { ...wrong_field.headers, 'x-api-key': merchant.live },
    });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().error.code, 'VALIDATION_ERROR');

    const json = await t.call('POST', `/v1/payments/${second.id}/proof`, merchant.live, { proof: 'x' });
    assert.equal(json.statusCode, 400);

    const big = Buffer.concat([await uniquePng(), Buffer.alloc(8192)]);
    const too_large = await uploadProof(second.id, big);
    assert.equal(too_large.statusCode, 413);
    assert.equal(too_large.json().error.code, 'PAYLOAD_TOO_LARGE');

    assert.equal((await uploadProof(second.id, await uniquePng(), other.live)).statusCode, 404);
    assert.equal((await uploadProof(second.id, await uniquePng(), null)).statusCode, 401);
    assert.equal(
      (await t.call('GET', `/v1/payments/${second.id}`, merchant.live)).json().data.status,
      'matched',
      'refused uploads changed nothing',
    );
    const proofs = await t.db.selectFrom('payment_proofs').select('id').where('payment_id', '=', second.id).execute();
    assert.equal(proofs.length, 0);
  });

  it('a proof for an expired payment is 409 and the payment is expired', async () => {
    const payment = await newPayment(merchant.live, { expires_in_seconds: 60 });
    t.clock.advance(61_000);
    const response = await uploadProof(payment.id, await uniquePng());
    assert.equal(response.statusCode, 409);
    assert.equal(response.json().error.code, 'PAYMENT_BAD_STATE');
    assert.equal((await t.call('GET', `/v1/payments/${payment.id}`, merchant.live)).json().data.status, 'expired');
  });

  it('a listed payment (timestamps formatted by the database) reads exactly as its read by id, microseconds cut alike', async () => {
    const lister = await t.createMerchant('Formats');
    const id = (await newPayment(lister.live)).id;
    const at = (ms: number, micros: string) =>
      `${new Date(t.clock.now().getTime() + ms).toISOString().slice(0, 23)}${micros}Z`;
    await t.db
      .updateTable('payments')
      .set({
        created_at: sql`${at(-5_000, '987')}::timestamptz`,
        matched_at: sql`${at(-4_000, '500')}::timestamptz`,
        expires_at: sql`${at(600_000, '001')}::timestamptz`,
      })
      .where('id', '=', id)
      .execute();
    const listed = await t.call('GET', '/v1/payments?limit=25', lister.live);
    const filtered = await t.call('GET', '/v1/payments?limit=25&status=matched', lister.live);
    const read = await t.call('GET', `/v1/payments/${id}`, lister.live);
    assert.equal(read.statusCode, 200, read.body);
    assert.deepEqual(listed.json().data, [read.json().data]);
    assert.deepEqual(filtered.json().data, [read.json().data]);
    assert.match(read.json().data.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(read.json().data.completed_at, null);
  });

  it('first pages asked for at once (one statement per merchant, mode and size) each get their own rows', async () => {
    const a = await t.createMerchant('Pages A');
    const b = await t.createMerchant('Pages B');
    const a_live = [(await newPayment(a.live)).id, (await newPayment(a.live)).id];
    const a_sandbox = (await newPayment(a.sandbox)).id;
    const b_live = (await newPayment(b.live)).id;
    const ids = (response: { json(): { data: { id: string }[] } }) =>
      response
        .json()
        .data.map((p) => p.id)
        .sort();
    const lists = await Promise.all([
      t.call('GET', '/v1/payments?limit=25', a.live),
      t.call('GET', '/v1/payments?limit=25', a.sandbox),
      t.call('GET', '/v1/payments?limit=25', b.live),
      t.call('GET', '/v1/payments?limit=1', a.live),
      t.call('GET', '/v1/payments?limit=25', a.live),
    ]);
    assert.deepEqual(
      lists.map((list) => list.statusCode),
      [200, 200, 200, 200, 200],
    );
    assert.deepEqual(ids(lists[0]!), [...a_live].sort());
    assert.deepEqual(ids(lists[1]!), [a_sandbox]);
    assert.deepEqual(ids(lists[2]!), [b_live]);
    assert.equal(lists[3]!.json().data.length, 1);
    assert.equal(lists[3]!.json().has_more, true);
    assert.deepEqual(ids(lists[4]!), [...a_live].sort());
    // a list asked for after a create answered shows it, though another list of the merchant is in flight
    const [, created] = await Promise.all([t.call('GET', '/v1/payments?limit=25', b.live), newPayment(b.live)]);
    assert.ok(ids(await t.call('GET', '/v1/payments?limit=25', b.live)).includes(created.id));
  });

  it('lists newest first with status, date, cursor, limit and offset, scoped to the merchant and mode', async () => {
    const lister = await t.createMerchant('Lister');
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      t.clock.advance(1_000);
      ids.push((await newPayment(lister.live)).id);
    }
    await newPayment(lister.sandbox);
    const first = await t.call('GET', '/v1/payments?limit=2', lister.live);
    assert.equal(first.statusCode, 200);
    const page1 = first.json();
    assert.deepEqual(
      page1.data.map((p: { id: string }) => p.id),
      [ids[4], ids[3]],
    );
    assert.equal(page1.has_more, true);
    const page2 = (await t.call('GET', `/v1/payments?limit=2&cursor=${page1.next_cursor}`, lister.live)).json();
    assert.deepEqual(
      page2.data.map((p: { id: string }) => p.id),
      [ids[2], ids[1]],
    );
    const page3 = (await t.call('GET', `/v1/payments?limit=2&cursor=${page2.next_cursor}`, lister.live)).json();
    assert.deepEqual(
      page3.data.map((p: { id: string }) => p.id),
      [ids[0]],
    );
    assert.equal(page3.has_more, false);
    assert.equal(page3.next_cursor, null);

    const offset = (await t.call('GET', '/v1/payments?limit=2&offset=3', lister.live)).json();
    assert.deepEqual(
      offset.data.map((p: { id: string }) => p.id),
      [ids[1], ids[0]],
    );

    const created_at_of_2 = (await t.call('GET', `/v1/payments/${ids[2]}`, lister.live)).json().data.created_at;
    const window = (
      await t.call('GET', `/v1/payments?from=${encodeURIComponent(created_at_of_2)}`, lister.live)
    ).json();
    assert.deepEqual(
      window.data.map((p: { id: string }) => p.id),
      [ids[4], ids[3], ids[2]],
    );
    const before_window = (
      await t.call('GET', `/v1/payments?to=${encodeURIComponent(created_at_of_2)}`, lister.live)
    ).json();
    assert.deepEqual(
      before_window.data.map((p: { id: string }) => p.id),
      [ids[1], ids[0]],
    );

    const by_status = (await t.call('GET', '/v1/payments?status=matched,completed', lister.live)).json();
    assert.equal(by_status.data.length, 5);
    assert.equal((await t.call('GET', '/v1/payments?status=expired', lister.live)).json().data.length, 0);
    assert.equal((await t.call('GET', '/v1/payments', lister.sandbox)).json().data.length, 1);

    for (const query of ['limit=0', 'limit=101', 'status=bogus', 'from=yesterday', 'cursor=%21%21', 'offset=-1']) {
      const response = await t.call('GET', `/v1/payments?${query}`, lister.live);
      assert.equal(response.statusCode, 400, query);
      assert.equal(response.json().error.code, 'VALIDATION_ERROR');
    }
    assert.equal((await t.call('GET', '/v1/payments', undefined)).statusCode, 401);
  });

  it("finds a payment by its exact order_id, in the caller's merchant and mode only", async () => {
    const finder = await t.createMerchant('Finder');
    const make = async (key: string, order_id: string) => {
      const response = await t.call('POST', '/v1/trades', key, {
        order_id,
        amount: 10_000,
        currency: 'THB',
        return_url: 'https://shop.example/return',
      });
      assert.equal(response.statusCode, 201, response.body);
      return response.json().data.id as string;
    };
    const live = await make(finder.live, 'shop-77');
    const sandbox = await make(finder.sandbox, 'shop-77');
    await make(finder.live, 'shop-770');
    await make(other.live, 'shop-77');
    const odd = await make(finder.live, 'ord/ü 1&x=2');
    const find = async (key: string, query: string) => {
      const response = await t.call('GET', `/v1/payments?${query}`, key);
      assert.equal(response.statusCode, 200, response.body);
      return (response.json().data as { id: string; order_id: string }[]).map((payment) => payment.id);
    };
    assert.deepEqual(await find(finder.live, 'order_id=shop-77'), [live]);
    assert.deepEqual(await find(finder.sandbox, 'order_id=shop-77'), [sandbox]);
    assert.deepEqual(await find(finder.live, 'order_id=shop-7'), []);
    assert.deepEqual(await find(finder.live, 'order_id=SHOP-77'), []);
    assert.deepEqual(await find(finder.live, `order_id=${encodeURIComponent('ord/ü 1&x=2')}`), [odd]);
    assert.deepEqual(await find(finder.live, 'order_id=shop-77&status=matched'), [live]);
    assert.deepEqual(await find(finder.live, 'order_id=shop-77&status=expired'), []);
    for (const query of ['order_id=', `order_id=${'x'.repeat(256)}`]) {
      const response = await t.call('GET', `/v1/payments?${query}`, finder.live);
      assert.equal(response.statusCode, 400, query);
      assert.equal(response.json().error.details[0].field, 'querystring.order_id');
    }
  });
});
