import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createApplication, type Application } from '../../src/app.ts';
import { accounts, type Ledger, type TransferCommand } from '../../src/modules/ledger/port.ts';
import { INTERNAL_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';

const WORLD = accounts.world(false);
const account = (name: string) => accounts.merchantAvailable(name, false);

/**
 * The same cases against the in-process ledger and against the ledger over HTTP: a batch gives each item its own
 * result (a refused item writes nothing and does not stop the others); a multi-posting command applies all or none.
 */
/** The journal's keys under a prefix, sorted. */
const journalOf = (db: () => TestApp['db']) => async (key_prefix: string) =>
  (
    await db()
      .selectFrom('ledger_transfers')
      .select('key')
      .where('key', 'like', `${key_prefix}-%`)
      .orderBy('key')
      .execute()
  ).map((row) => row.key);

function batchCases(
  label: string,
  setup: () => { ledger: Ledger; journal: (key_prefix: string) => Promise<string[]> },
) {
  let run = 0;
  const prefix = () => `${label}-${++run}`;

  it(`${label}: a batch applies in order, each item with its own result; refusals write nothing and do not stop the others`, async () => {
    const { ledger, journal } = setup();
    const p = prefix();
    const [a, b] = [account(`${p}-a`), account(`${p}-b`)];
    const mint: TransferCommand = {
      key: `${p}-mint`,
      kind: 'mint',
      debit_account: WORLD,
      credit_account: a,
      amount_micro_pay: 1_000,
    };
    const results = await ledger.transferBatch([
      mint,
      // depends on the credit just before it
      { key: `${p}-move`, kind: 'transfer', debit_account: a, credit_account: b, amount_micro_pay: 700 },
      // 300 left: refused alone
      { key: `${p}-over`, kind: 'transfer', debit_account: a, credit_account: b, amount_micro_pay: 301 },
      // same key, same fields: replays the first item
      mint,
      // same key, other fields: conflict alone
      { ...mint, amount_micro_pay: 999 },
      // malformed: refused before the database
      { key: `${p}-bad`, kind: 'transfer', debit_account: a, credit_account: a, amount_micro_pay: 1 },
      { key: `${p}-rest`, kind: 'transfer', debit_account: a, credit_account: b, amount_micro_pay: 300 },
    ]);
    assert.deepEqual(
      results.map((result) => (result.ok ? (result.transfer.replayed ? 'replayed' : 'applied') : result.error.code)),
      [
        'applied',
        'applied',
        'LEDGER_INSUFFICIENT_FUNDS',
        'replayed',
        'LEDGER_IDEMPOTENCY_CONFLICT',
        'VALIDATION_ERROR',
        'applied',
      ],
    );
    const first = results[0]!;
    const replay = results[3]!;
    assert.ok(first.ok && replay.ok && first.transfer.id === replay.transfer.id, 'the replay is the first transfer');
    assert.equal(await ledger.balance(a), 0);
    assert.equal(await ledger.balance(b), 1_000);
    assert.deepEqual(await journal(p), [`${p}-mint`, `${p}-move`, `${p}-rest`]);
    assert.equal((await ledger.verify()).ok, true);
  });

  it(`${label}: several postings in one command apply together, replay together, and a refused posting undoes the others`, async () => {
    const { ledger, journal } = setup();
    const p = prefix();
    const [seller_1, seller_2, merchant] = [account(`${p}-s1`), account(`${p}-s2`), account(`${p}-m`)];
    await ledger.transferAll([
      { key: `${p}-fund-1`, kind: 'mint', debit_account: WORLD, credit_account: seller_1, amount_micro_pay: 600 },
      { key: `${p}-fund-2`, kind: 'mint', debit_account: WORLD, credit_account: seller_2, amount_micro_pay: 300 },
    ]);
    const legs: TransferCommand[] = [
      { key: `${p}-leg-1`, kind: 'transfer', debit_account: seller_1, credit_account: merchant, amount_micro_pay: 600 },
      { key: `${p}-leg-2`, kind: 'transfer', debit_account: seller_2, credit_account: merchant, amount_micro_pay: 400 },
    ];
    // the second leg overdraws seller 2: the first leg is undone with it
    await assert.rejects(ledger.transferAll(legs), { code: 'LEDGER_INSUFFICIENT_FUNDS' });
    assert.deepEqual(
      [await ledger.balance(seller_1), await ledger.balance(seller_2), await ledger.balance(merchant)],
      [600, 300, 0],
    );
    assert.deepEqual(await journal(`${p}-leg`), []);

    legs[1] = { ...legs[1]!, amount_micro_pay: 300 };
    const applied = await ledger.transferAll(legs);
    assert.deepEqual(
      applied.map((transfer) => [transfer.key, transfer.replayed]),
      [
        [`${p}-leg-1`, false],
        [`${p}-leg-2`, false],
      ],
    );
    const replayed = await ledger.transferAll(legs);
    assert.deepEqual(
      replayed.map((transfer) => [transfer.id, transfer.replayed]),
      applied.map((transfer) => [transfer.id, true]),
    );
    await assert.rejects(ledger.transferAll([legs[0]!, { ...legs[1]!, amount_micro_pay: 1 }]), {
      code: 'LEDGER_IDEMPOTENCY_CONFLICT',
    });
    await assert.rejects(ledger.transferAll([legs[0]!, { ...legs[1]!, debit_account: 'nope' }]), {
      code: 'VALIDATION_ERROR',
    });
    assert.deepEqual(
      [await ledger.balance(seller_1), await ledger.balance(seller_2), await ledger.balance(merchant)],
      [0, 0, 900],
    );
    assert.equal((await ledger.verify()).ok, true);
  });
}

describe('ledger batches and multi-posting commands: in process', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());
  batchCases('in-process', () => ({ ledger: t.application.ledger, journal: journalOf(() => t.db) }));

  it("in-process: a multi-posting command joins the caller's transaction and rolls back with it", async () => {
    const target = account('rollback-m');
    await assert.rejects(
      t.db.transaction().execute(async (trx) => {
        await t.application.ledger.transferAll(
          [{ key: 'rollback-1', kind: 'mint', debit_account: WORLD, credit_account: target, amount_micro_pay: 5 }],
          { trx },
        );
        throw new Error('caller fails after the ledger call');
      }),
      /caller fails/,
    );
    assert.equal(await t.application.ledger.balance(target), 0);
  });

  it('in-process: 20 concurrent batches crediting and debiting the same accounts keep every balance and the journal consistent', async () => {
    const ledger = t.application.ledger;
    const [hub, spoke] = [account('race-hub'), account('race-spoke')];
    await ledger.transfer({
      key: 'race-fund',
      kind: 'mint',
      debit_account: WORLD,
      credit_account: hub,
      amount_micro_pay: 1_000,
    });
    const batches = await Promise.all(
      Array.from({ length: 20 }, (_, batch) =>
        ledger.transferBatch(
          Array.from({ length: 10 }, (_, item) => ({
            key: `race-${batch}-${item}`,
            kind: 'transfer' as const,
            debit_account: hub,
            credit_account: spoke,
            amount_micro_pay: 7,
          })),
        ),
      ),
    );
    const applied = batches.flat().filter((result) => result.ok).length;
    // 200 moves of 7 over 1,000: exactly 142 fit (994), the rest are refused alone
    assert.equal(applied, 142);
    assert.equal(
      batches.flat().filter((result) => !result.ok && result.error.code === 'LEDGER_INSUFFICIENT_FUNDS').length,
      58,
    );
    assert.equal(await ledger.balance(hub), 6);
    assert.equal(await ledger.balance(spoke), 994);
    assert.equal((await ledger.verify()).ok, true);
  });

  it('in-process: batches that apply whole (set-based) in opposite directions, and one batch sent by many callers at once, apply each key once', async () => {
    const ledger = t.application.ledger;
    const ring = ['ring-a', 'ring-b', 'ring-c', 'ring-d'].map(account);
    await ledger.transferBatch(
      ring.map((name, i) => ({
        key: `ring-fund-${i}`,
        kind: 'mint' as const,
        debit_account: WORLD,
        credit_account: name,
        amount_micro_pay: 10_000,
      })),
    );
    // 16 batches of 12 moves around the ring, half of them clockwise and half the other way: every batch locks every
    // account, and they meet them in opposite orders
    const moves = await Promise.all(
      Array.from({ length: 16 }, (_, batch) =>
        ledger.transferBatch(
          Array.from({ length: 12 }, (_, item) => {
            // an even batch is an odd one backwards: the same moves reversed, in the reverse order
            const move = batch % 2 ? item : 11 - item;
            const [from, to] = batch % 2 ? [move % 4, (move + 1) % 4] : [(move + 1) % 4, move % 4];
            return {
              key: `ring-${batch}-${item}`,
              kind: 'transfer' as const,
              debit_account: ring[from]!,
              credit_account: ring[to]!,
              amount_micro_pay: 1 + move,
            };
          }),
        ),
      ),
    );
    assert.equal(moves.flat().filter((result) => result.ok && !result.transfer.replayed).length, 16 * 12);
    // every move was made once each way
    assert.deepEqual(await Promise.all(ring.map((name) => ledger.balance(name))), [10_000, 10_000, 10_000, 10_000]);

    // a batch that opens its accounts (the second item spends what the first credited to a new account), sent 8 times at once
    const [fresh, sink] = [account('ring-fresh'), account('ring-sink')];
    const same: TransferCommand[] = [
      { key: 'ring-same-1', kind: 'transfer', debit_account: ring[0]!, credit_account: fresh, amount_micro_pay: 500 },
      { key: 'ring-same-2', kind: 'transfer', debit_account: fresh, credit_account: sink, amount_micro_pay: 300 },
      { key: 'ring-same-3', kind: 'mint', debit_account: WORLD, credit_account: sink, amount_micro_pay: 7 },
    ];
    const callers = await Promise.all(
      Array.from({ length: 8 }, (_, caller) =>
        caller % 2
          ? ledger.transferBatch(same)
          : ledger
              .transferAll(same)
              .then((transfers) => transfers.map((transfer) => ({ ok: true as const, transfer }))),
      ),
    );
    const ids = callers.map((results) => results.map((result) => (result.ok ? result.transfer.id : result.error.code)));
    for (const caller_ids of ids) assert.deepEqual(caller_ids, ids[0], 'every caller gets the same transfers');
    assert.equal(
      callers.flat().filter((result) => result.ok && !result.transfer.replayed).length,
      3,
      'each key applied once',
    );
    assert.deepEqual(await Promise.all([ring[0]!, fresh, sink].map((name) => ledger.balance(name))), [9_500, 200, 307]);
    assert.deepEqual(
      (
        await t.db
          .selectFrom('ledger_transfers')
          .select('key')
          .where('key', 'like', 'ring-same-%')
          .orderBy('key')
          .execute()
      ).map((row) => row.key),
      ['ring-same-1', 'ring-same-2', 'ring-same-3'],
    );

    // an atomic batch refused by its last item opens nothing: not the new credit account, not the new debit account
    const [never, nowhere] = [account('ring-never'), account('ring-nowhere')];
    await assert.rejects(
      ledger.transferAll([
        { key: 'ring-undone-1', kind: 'transfer', debit_account: ring[1]!, credit_account: never, amount_micro_pay: 5 },
        {
          key: 'ring-undone-2',
          kind: 'transfer',
          debit_account: nowhere,
          credit_account: ring[2]!,
          amount_micro_pay: 1,
        },
      ]),
      { code: 'LEDGER_INSUFFICIENT_FUNDS' },
    );
    assert.deepEqual([...(await ledger.balances([never, nowhere, ring[1]!])).values()], [null, null, 10_000]);
    assert.equal((await ledger.verify()).ok, true);
  });
});

describe('ledger batches and multi-posting commands: over HTTP', () => {
  let ledger_side: TestApp;
  let ledger_server: Application;
  let gateway: TestApp;
  let port: number;
  before(async () => {
    ledger_side = await startTestApp({ env: { ROLES: 'ledger' } });
    await ledger_side.application.app.close();
    ledger_server = await createApplication({
      config: ledger_side.application.config,
      database: ledger_side.application.database,
      clock: ledger_side.clock,
    });
    await ledger_server.app.listen({ host: '127.0.0.1', port: 0 });
    port = (ledger_server.app.server.address() as AddressInfo).port;
    gateway = await startTestApp({
      env: { ROLES: 'api,worker', LEDGER_URL: `http://127.0.0.1:${port}`, LEDGER_TIMEOUT_MS: '5000' },
    });
  });
  after(async () => {
    await gateway.close();
    await ledger_server.close().catch(() => {});
    await ledger_side.application.database.close();
  });
  batchCases('http', () => ({
    ledger: gateway.application.ledger,
    journal: journalOf(() => ledger_side.db),
  }));

  it('http: the batch and transaction routes need the internal token and refuse an empty or oversized body with 400', async () => {
    const post = (path: string, body: unknown, token?: string) =>
      fetch(`http://127.0.0.1:${port}/internal/ledger${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });
    assert.equal((await post('/transfers/batch', { transfers: [] })).status, 401);
    assert.equal((await post('/transactions', { postings: [] })).status, 401);
    assert.equal((await post('/transfers/batch', { transfers: [] }, INTERNAL_TOKEN)).status, 400);
    assert.equal((await post('/transactions', { postings: [] }, INTERNAL_TOKEN)).status, 400);
    const oversized = Array.from({ length: 1001 }, (_, i) => ({
      key: `o-${i}`,
      kind: 'mint',
      debit_account: WORLD,
      credit_account: account('o'),
      amount_micro_pay: 1,
    }));
    assert.equal((await post('/transfers/batch', { transfers: oversized }, INTERNAL_TOKEN)).status, 400);
  });
});
