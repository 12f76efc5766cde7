import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { accounts, type Ledger } from '../../src/modules/ledger/port.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const ON_POSTGRES = Boolean(process.env['DATABASE_URL']);
const A = accounts.merchantAvailable('33333333-3333-4333-8333-333333333333', false);
const B = accounts.merchantAvailable('44444444-4444-4444-8444-444444444444', false);
const WORLD = accounts.world(false);

/**
 * Postings add to a stripe of an issuance account rather than lock its row, so mints of different
 * merchants never wait for each other's commits; its balance is its row plus its stripes.
 */
describe('ledger: issuance accounts move through stripes', () => {
  let t: TestApp;
  let ledger: Ledger;
  before(async () => {
    t = await startTestApp();
    ledger = t.application.ledger;
  });
  after(() => t.close());

  const stripes = async (account: string) =>
    (
      await t.db
        .selectFrom('ledger_issuance_stripes')
        .select(['stripe', 'delta_micro_pay'])
        .where('account', '=', account)
        .orderBy('stripe')
        .execute()
    ).map((row) => [row.stripe, Number(row.delta_micro_pay)]);

  it('single, batched and atomic postings add to the stripes; the row stays, balances and verify agree', async () => {
    const before_world = await ledger.balance(WORLD);
    await ledger.transfer({
      key: 'stripe-1',
      kind: 'mint',
      debit_account: WORLD,
      credit_account: A,
      amount_micro_pay: 1_000,
    });
    await ledger.transferBatch([
      { key: 'stripe-2', kind: 'mint', debit_account: WORLD, credit_account: A, amount_micro_pay: 200 },
      { key: 'stripe-3', kind: 'mint', debit_account: WORLD, credit_account: B, amount_micro_pay: 30 },
    ]);
    await t.db.transaction().execute((trx) =>
      ledger.transferAll(
        [
          { key: 'stripe-4', kind: 'transfer', debit_account: A, credit_account: B, amount_micro_pay: 100 },
          { key: 'stripe-5', kind: 'burn', debit_account: B, credit_account: WORLD, amount_micro_pay: 4 },
        ],
        { trx },
      ),
    );
    assert.equal(await ledger.balance(WORLD), before_world - 1_226);
    assert.deepEqual([await ledger.balance(A), await ledger.balance(B)], [1_100, 126]);
    // one after another, every posting found stripe 0 free
    assert.deepEqual(await stripes(WORLD), [[0, before_world - 1_226]]);
    const row = await t.db
      .selectFrom('ledger_accounts')
      .select('balance_micro_pay')
      .where('name', '=', WORLD)
      .executeTakeFirstOrThrow();
    assert.equal(Number(row.balance_micro_pay), 0, 'the issuance account row is not written by postings');
    // a replay adds nothing
    assert.equal(
      (
        await ledger.transfer({
          key: 'stripe-1',
          kind: 'mint',
          debit_account: WORLD,
          credit_account: A,
          amount_micro_pay: 1_000,
        })
      ).replayed,
      true,
    );
    assert.equal(await ledger.balance(WORLD), before_world - 1_226);
    const verification = await ledger.verify();
    assert.equal(verification.ok, true, verification.problems.join('; '));
  });

  it('a mint does not wait for another transaction that minted from the same issuance account and has not committed', {
    skip: ON_POSTGRES ? false : 'PostgreSQL only: PGlite runs one transaction at a time',
  }, async () => {
    const before_world = await ledger.balance(WORLD);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let minted!: () => void;
    const inside = new Promise<void>((resolve) => (minted = resolve));
    const open = t.db.transaction().execute(async (trx) => {
      await ledger.transfer(
        { key: 'held-mint', kind: 'mint', debit_account: WORLD, credit_account: A, amount_micro_pay: 5 },
        { trx },
      );
      minted();
      await held;
    });
    await inside;
    const waiting = (ms: number) => new Promise<'waiting'>((resolve) => setTimeout(() => resolve('waiting'), ms));
    try {
      // one alone (a set of one) and two together (one set), both from the held account
      const single = ledger
        .transfer({ key: 'free-mint-1', kind: 'mint', debit_account: WORLD, credit_account: B, amount_micro_pay: 7 })
        .then(() => 'applied');
      assert.equal(await Promise.race([single, waiting(3_000)]), 'applied');
      const batch = ledger
        .transferBatch([
          { key: 'free-mint-2', kind: 'mint', debit_account: WORLD, credit_account: B, amount_micro_pay: 11 },
          {
            key: 'free-mint-3',
            kind: 'mint',
            debit_account: WORLD,
            credit_account: accounts.merchantAvailable('55555555-5555-4555-8555-555555555555', false),
            amount_micro_pay: 13,
          },
        ])
        .then(() => 'applied');
      assert.equal(await Promise.race([batch, waiting(3_000)]), 'applied');
    } finally {
      release();
      await open;
    }
    // the held transaction kept stripe 0; the others took stripe 1
    assert.deepEqual(
      (await stripes(WORLD)).map(([stripe]) => stripe),
      [0, 1],
    );
    assert.equal(await ledger.balance(WORLD), before_world - 36);
    const { rows } = await sql<{
      total: string;
    }>`select sum(delta_micro_pay)::text as total from ledger_issuance_stripes where account = ${WORLD}`.execute(t.db);
    assert.equal(Number(rows[0]!.total), before_world - 36);
    const verification = await ledger.verify();
    assert.equal(verification.ok, true, verification.problems.join('; '));
  });
});
