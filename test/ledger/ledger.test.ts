import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ADMIN_HEADERS, startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { accounts, type Ledger } from '../../src/modules/ledger/port.ts';
import { processProofVerdicts } from '../../src/modules/payments/verdicts.ts';
import { nullValidator } from '../../src/modules/validators/null-validator.ts';
import { confirmAwaitingLegs, uploadProof } from '../helpers/payments.ts';

const A = accounts.merchantAvailable('11111111-1111-4111-8111-111111111111', false);
const B = accounts.merchantAvailable('22222222-2222-4222-8222-222222222222', false);
const WORLD = accounts.world(false);

describe('ledger: transfers, idempotency, overdraft, modes, invariants, adjustments, payment completion', () => {
  let t: TestApp;
  let ledger: Ledger;
  let merchant: TestMerchant;
  before(async () => {
    t = await startTestApp();
    ledger = t.application.ledger;
    merchant = await t.createMerchant();
  });
  after(() => t.close());

  it('mint, transfer and burn move PAY double-entry; balances and verify agree', async () => {
    const minted = await ledger.transfer({
      key: 'k-mint-1',
      kind: 'mint',
      debit_account: WORLD,
      credit_account: A,
      amount_micro_pay: 1_000,
    });
    assert.equal(minted.replayed, false);
    await ledger.transfer({
      key: 'k-move-1',
      kind: 'transfer',
      debit_account: A,
      credit_account: B,
      amount_micro_pay: 400,
    });
    await ledger.transfer({
      key: 'k-burn-1',
      kind: 'burn',
      debit_account: B,
      credit_account: WORLD,
      amount_micro_pay: 100,
    });
    assert.equal(await ledger.balance(A), 600);
    assert.equal(await ledger.balance(B), 300);
    assert.equal(await ledger.balance(WORLD), -900);
    assert.equal(await ledger.balance('live:merchant:unknown:available'), 0);
    const verification = await ledger.verify();
    assert.equal(verification.ok, true, verification.problems.join('; '));
    assert.equal(verification.minted_micro_pay - verification.burned_micro_pay, verification.circulation_micro_pay);
  });

  it('same key + same fields replays the first result; same key + other fields is LEDGER_IDEMPOTENCY_CONFLICT', async () => {
    const first = await ledger.transfer({
      key: 'k-idem',
      kind: 'mint',
      debit_account: WORLD,
      credit_account: A,
      amount_micro_pay: 50,
      memo: 'first',
    });
    const again = await ledger.transfer({
      key: 'k-idem',
      kind: 'mint',
      debit_account: WORLD,
      credit_account: A,
      amount_micro_pay: 50,
      memo: 'reworded',
    });
    assert.equal(again.replayed, true);
    assert.equal(again.id, first.id);
    assert.equal(again.memo, 'first');
    for (const other of [
      { amount_micro_pay: 51 },
      { credit_account: B },
      { kind: 'transfer' as const, debit_account: B },
    ]) {
      await assert.rejects(
        ledger.transfer({
          key: 'k-idem',
          kind: 'mint',
          debit_account: WORLD,
          credit_account: A,
          amount_micro_pay: 50,
          ...other,
        }),
        { code: 'LEDGER_IDEMPOTENCY_CONFLICT' },
      );
    }
    assert.equal(await ledger.balance(A), 650);
  });

  it('refuses an overdraft with LEDGER_INSUFFICIENT_FUNDS and writes nothing, not even an empty account', async () => {
    const empty = accounts.merchantAvailable('33333333-3333-4333-8333-333333333333', false);
    await assert.rejects(
      ledger.transfer({
        key: 'k-over-1',
        kind: 'transfer',
        debit_account: empty,
        credit_account: A,
        amount_micro_pay: 1,
      }),
      { code: 'LEDGER_INSUFFICIENT_FUNDS' },
    );
    await assert.rejects(
      ledger.transfer({
        key: 'k-over-2',
        kind: 'transfer',
        debit_account: A,
        credit_account: B,
        amount_micro_pay: 651,
      }),
      { code: 'LEDGER_INSUFFICIENT_FUNDS' },
    );
    assert.equal((await ledger.balances([empty])).get(empty), null);
    assert.equal(
      await t.db
        .selectFrom('ledger_transfers')
        .select('id')
        .where('key', 'in', ['k-over-1', 'k-over-2'])
        .executeTakeFirst(),
      undefined,
    );
    // the refused key is free for a later, valid use
    await ledger.transfer({
      key: 'k-over-2',
      kind: 'transfer',
      debit_account: A,
      credit_account: B,
      amount_micro_pay: 50,
    });
  });

  it('rejects malformed commands: cross-mode, kind not matching the accounts, bad amounts and names', async () => {
    const cases = [
      { kind: 'mint', debit_account: accounts.world(true), credit_account: A, amount_micro_pay: 1 },
      { kind: 'transfer', debit_account: WORLD, credit_account: A, amount_micro_pay: 1 },
      { kind: 'mint', debit_account: A, credit_account: B, amount_micro_pay: 1 },
      { kind: 'burn', debit_account: A, credit_account: B, amount_micro_pay: 1 },
      { kind: 'transfer', debit_account: A, credit_account: B, amount_micro_pay: 0 },
      { kind: 'transfer', debit_account: A, credit_account: B, amount_micro_pay: 1.5 },
      { kind: 'transfer', debit_account: A, credit_account: A, amount_micro_pay: 1 },
      { kind: 'transfer', debit_account: 'merchant:x', credit_account: B, amount_micro_pay: 1 },
    ] as const;
    for (const [index, command] of cases.entries()) {
      await assert.rejects(
        ledger.transfer({ key: `k-bad-${index}`, ...command }),
        { code: 'VALIDATION_ERROR' },
        JSON.stringify(command),
      );
    }
  });

  it('the journal is append-only and an overdraft is refused by the database too', async () => {
    await assert.rejects(sql`update ledger_transfers set amount_micro_pay = 1`.execute(t.db), /append-only/);
    await assert.rejects(sql`delete from ledger_transfers`.execute(t.db), /append-only/);
    await assert.rejects(
      sql`update ledger_accounts set balance_micro_pay = -1 where name = ${A}`.execute(t.db),
      /ledger_accounts_no_overdraft/,
    );
  });

  it('concurrent transfers from one account never overdraw it; concurrent uses of one key apply once', async () => {
    const source = accounts.merchantAvailable('44444444-4444-4444-8444-444444444444', false);
    await ledger.transfer({
      key: 'k-fund-c',
      kind: 'mint',
      debit_account: WORLD,
      credit_account: source,
      amount_micro_pay: 1_000,
    });
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        ledger.transfer({
          key: `k-c-${i}`,
          kind: 'transfer',
          debit_account: source,
          credit_account: i % 2 ? A : B,
          amount_micro_pay: 100,
        }),
      ),
    );
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 10);
    assert.ok(
      results
        .filter((r) => r.status === 'rejected')
        .every((r) => (r as PromiseRejectedResult).reason.code === 'LEDGER_INSUFFICIENT_FUNDS'),
    );
    assert.equal(await ledger.balance(source), 0);

    const same = await Promise.all(
      Array.from({ length: 10 }, () =>
        ledger.transfer({
          key: 'k-same',
          kind: 'mint',
          debit_account: WORLD,
          credit_account: source,
          amount_micro_pay: 7,
        }),
      ),
    );
    assert.equal(same.filter((r) => !r.replayed).length, 1);
    assert.equal(new Set(same.map((r) => r.id)).size, 1);
    assert.equal(await ledger.balance(source), 7);
    assert.equal((await ledger.verify()).ok, true);
  });

  it('opposite transfers between two accounts at once do not deadlock', async () => {
    await ledger.transfer({
      key: 'k-fund-b',
      kind: 'mint',
      debit_account: WORLD,
      credit_account: B,
      amount_micro_pay: 10_000,
    });
    await ledger.transfer({
      key: 'k-fund-a',
      kind: 'mint',
      debit_account: WORLD,
      credit_account: A,
      amount_micro_pay: 10_000,
    });
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        ledger.transfer({
          key: `k-x-${i}`,
          kind: 'transfer',
          debit_account: i % 2 ? A : B,
          credit_account: i % 2 ? B : A,
          amount_micro_pay: 10,
        }),
      ),
    );
    assert.equal((await ledger.verify()).ok, true);
  });

  it('POST /admin/merchants/{id}/ledger-adjustments: audited credit and debit, idempotent by key, 409 overdraft, 404, 400, 401, 403', async () => {
    const url = `/admin/merchants/${merchant.id}/ledger-adjustments`;
    const credit = await t.request({
      method: 'POST',
      url,
      headers: { ...ADMIN_HEADERS, 'idempotency-key': 'adj-1' },
      payload: { amount_micro_pay: 5_000_000, direction: 'credit', reason: 'initial funding' },
    });
    assert.equal(credit.statusCode, 201, credit.body);
    assert.equal(credit.json().data.available_micro_pay, 5_000_000);
    assert.equal(credit.json().data.transfer.kind, 'mint');
    const replay = await t.request({
      method: 'POST',
      url,
      headers: { ...ADMIN_HEADERS, 'idempotency-key': 'adj-1' },
      payload: { amount_micro_pay: 5_000_000, direction: 'credit', reason: 'initial funding' },
    });
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.json().data.available_micro_pay, 5_000_000);
    const conflict = await t.request({
      method: 'POST',
      url,
      headers: { ...ADMIN_HEADERS, 'idempotency-key': 'adj-1' },
      payload: { amount_micro_pay: 6_000_000, direction: 'credit', reason: 'x' },
    });
    assert.equal(conflict.statusCode, 409);
    assert.equal(conflict.json().error.code, 'LEDGER_IDEMPOTENCY_CONFLICT');

    const debit = await t.admin('POST', url, { amount_micro_pay: 2_000_000, direction: 'debit', reason: 'correction' });
    assert.equal(debit.statusCode, 201);
    assert.equal(debit.json().data.available_micro_pay, 3_000_000);
    const overdraft = await t.admin('POST', url, {
      amount_micro_pay: 3_000_001,
      direction: 'debit',
      reason: 'too much',
    });
    assert.equal(overdraft.statusCode, 409);
    assert.equal(overdraft.json().error.code, 'LEDGER_INSUFFICIENT_FUNDS');

    const audit = await t.db
      .selectFrom('admin_audit_log')
      .selectAll()
      .where('target_id', '=', merchant.id)
      .orderBy('created_at')
      .execute();
    assert.deepEqual(audit.map((row) => row.action).sort(), ['ledger.adjustment.credit', 'ledger.adjustment.debit']);
    assert.equal(audit[0]!.actor_user_id, 'ops-1');

    assert.equal(
      (
        await t.admin('POST', '/admin/merchants/00000000-0000-4000-8000-000000000000/ledger-adjustments', {
          amount_micro_pay: 1,
          direction: 'credit',
          reason: 'x',
        })
      ).statusCode,
      404,
    );
    assert.equal(
      (await t.admin('POST', url, { amount_micro_pay: 0, direction: 'credit', reason: 'x' })).statusCode,
      400,
    );
    assert.equal(
      (await t.admin('POST', url, { amount_micro_pay: 1, direction: 'sideways', reason: 'x' })).statusCode,
      400,
    );
    assert.equal(
      (await t.request({ method: 'POST', url, payload: { amount_micro_pay: 1, direction: 'credit', reason: 'x' } }))
        .statusCode,
      401,
    );
    const forbidden = await t.request({
      method: 'POST',
      url,
      headers: { ...ADMIN_HEADERS, 'x-actor-role': 'viewer' },
      payload: { amount_micro_pay: 1, direction: 'credit', reason: 'x' },
    });
    assert.equal(forbidden.json().error.code, 'ADMIN_FORBIDDEN');
    assert.equal(await ledger.balance(accounts.merchantAvailable(merchant.id, false)), 3_000_000);
  });

  it('a live seller is funded at creation; payment completion moves each leg from the seller to the merchant less the fee (keys payment:<id>:leg:<n> and ...:fee)', async () => {
    const seller = await t.createSeller(thbSeller(350_000, '35.00'));
    // 3,500.00 THB at 35.00 THB per PAY = 100 PAY
    assert.equal(await ledger.balance(accounts.seller(seller.id, false)), 100_000_000);
    const before_available = await ledger.balance(accounts.merchantAvailable(merchant.id, false));
    const created = await t.call('POST', '/v1/trades', merchant.live, {
      order_id: 'ledger-1',
      amount: 35_000,
      currency: 'THB',
      return_url: 'https://shop.example/r',
    });
    assert.equal(created.statusCode, 201, created.body);
    const payment = created.json().data;
    await uploadProof(t, merchant.live, payment.id);
    await processProofVerdicts({ ...t.application.payments, validator: nullValidator });
    // null_validator checks nothing: the seller's confirmation (an operator's for it) completes the leg.
    await confirmAwaitingLegs(t, [payment.id]);
    const read = await t.call('GET', `/v1/payments/${payment.id}`, merchant.live);
    assert.equal(read.json().data.status, 'completed');
    // the default settlement fee, 150 bps of the leg's 10 PAY, goes to the fees account
    assert.equal(await ledger.balance(accounts.merchantAvailable(merchant.id, false)), before_available + 9_850_000);
    assert.equal(await ledger.balance(accounts.seller(seller.id, false)), 90_000_000);
    const leg = await t.db
      .selectFrom('ledger_transfers')
      .selectAll()
      .where('key', '=', `payment:${payment.id}:leg:1`)
      .executeTakeFirstOrThrow();
    assert.equal(leg.amount_micro_pay, 9_850_000);
    const fee = await t.db
      .selectFrom('ledger_transfers')
      .selectAll()
      .where('key', '=', `payment:${payment.id}:leg:1:fee`)
      .executeTakeFirstOrThrow();
    assert.deepEqual([fee.credit_account, fee.amount_micro_pay], [accounts.fees(false), 150_000]);
    assert.equal((await ledger.verify()).ok, true);
  });

  it('GET /admin/ledger/verify and account reads: 200 for super admins, 401 without the token', async () => {
    const verify = await t.admin('GET', '/admin/ledger/verify');
    assert.equal(verify.statusCode, 200);
    assert.equal(verify.json().data.ok, true);
    assert.equal(verify.json().data.total_balance_micro_pay, 0);
    assert.equal((await t.request({ method: 'GET', url: '/admin/ledger/verify' })).statusCode, 401);
    assert.equal((await t.admin('GET', `/admin/ledger/accounts/${encodeURIComponent(A)}`)).statusCode, 200);
    assert.equal((await t.admin('GET', `/admin/ledger/accounts/${encodeURIComponent('live:nobody')}`)).statusCode, 404);
  });
});
