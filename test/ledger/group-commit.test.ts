import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GroupCommit, settleBatch } from '../../src/lib/group-commit.ts';
import { accounts, type Ledger, type TransferResult } from '../../src/modules/ledger/port.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const WORLD = accounts.world(false);
const account = (name: string) => accounts.merchantAvailable(name, false);

describe('group commit: the calls of one turn travel together, each answered alone', () => {
  it('gathers what is submitted in one turn, at most max_batch per call and max_in_flight calls at once', async () => {
    const calls: number[][] = [];
    let running = 0;
    let most_running = 0;
    const group = new GroupCommit(
      async (items: number[]) => {
        calls.push(items);
        most_running = Math.max(most_running, ++running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
        return items.map((item) => item * 10);
      },
      { max_in_flight: 2, max_batch: 3 },
    );
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => group.submit(i)));
    assert.deepEqual(
      answers,
      Array.from({ length: 10 }, (_, i) => i * 10),
    );
    assert.deepEqual(
      calls,
      [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]],
      'FIFO batches of at most 3; the rest waits for a free slot',
    );
    assert.equal(most_running, 2);
  });

  it('a call that fails as a whole is retried item by item: only the item that fails alone is refused', async () => {
    const calls: number[][] = [];
    const group = new GroupCommit(
      async (items: number[]) => {
        calls.push(items);
        if (items.includes(13)) throw new Error(`poisoned by 13 among ${items.length}`);
        return items.map((item) => item + 1);
      },
      { max_in_flight: 1, max_batch: 8 },
    );
    const settled = await Promise.allSettled([1, 13, 2].map((item) => group.submit(item)));
    assert.deepEqual(
      settled.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : (outcome.reason as Error).message)),
      [2, 'poisoned by 13 among 1', 3],
    );
    assert.deepEqual(calls, [[1, 13, 2], [1], [13], [2]]);
  });

  it('batches that await `previous` write in arrival order, and a failed batch runs its items alone after the one before', async () => {
    const log: string[] = [];
    const group = new GroupCommit(
      async (items: number[], previous: Promise<void>) => {
        // the later batch plans faster than the one before it
        await new Promise((resolve) => setTimeout(resolve, items[0] === 0 ? 20 : 1));
        await previous;
        if (items.length > 1 && items.includes(3)) throw new Error('refused');
        log.push(`wrote ${items.join('+')}`);
        return items;
      },
      { max_in_flight: 2, max_batch: 2 },
    );
    const answers = await Promise.all([0, 1, 2, 3].map((item) => group.submit(item)));
    assert.deepEqual(answers, [0, 1, 2, 3]);
    assert.deepEqual(log, ['wrote 0+1', 'wrote 2', 'wrote 3']);
  });

  it('waits gather_ms for company only after an idle moment: items queued behind a batch start when it is done', async () => {
    const started: { items: number[]; at_ms: number }[] = [];
    let finish_first!: () => void;
    const first_held = new Promise<void>((resolve) => (finish_first = resolve));
    const group = new GroupCommit(
      async (items: number[]) => {
        started.push({ items, at_ms: performance.now() });
        if (items[0] === 1) await first_held;
        return items;
      },
      { max_in_flight: 1, max_batch: 8, gather_ms: 300 },
    );
    const first = group.submit(1);
    await new Promise((resolve) => setTimeout(resolve, 320));
    assert.deepEqual(
      started.map((call) => call.items),
      [[1]],
      'the first item waited out gather_ms, then ran',
    );
    const behind = [group.submit(2), group.submit(3)];
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      started.map((call) => call.items),
      [[1]],
      'the later items wait behind the batch in flight',
    );
    const done_ms = performance.now();
    finish_first();
    assert.equal(await first, 1);
    assert.deepEqual(await Promise.all(behind), [2, 3]);
    assert.deepEqual(
      started.map((call) => call.items),
      [[1], [2, 3]],
    );
    assert.ok(
      started[1]!.at_ms - done_ms < 100,
      `the queued batch started ${(started[1]!.at_ms - done_ms).toFixed(0)} ms after the one before, not gather_ms`,
    );
  });

  it('next_before_answers: the next batch applies before the last one is answered; a failed batch still goes first', async () => {
    const log: string[] = [];
    let release_first!: () => void;
    const first_held = new Promise<void>((resolve) => (release_first = resolve));
    const group = new GroupCommit(
      async (items: number[], previous: Promise<void>) => {
        if (items[0] === 0) await first_held;
        await previous;
        if (items.length > 1 && items.includes(13)) throw new Error('refused');
        log.push(`applied ${items.join('+')}`);
        return items;
      },
      { max_in_flight: 1, max_batch: 8, next_before_answers: true },
    );
    const answered = (item: number) => group.submit(item).then((answer) => log.push(`answered ${answer}`));
    const first = answered(0);
    await new Promise((resolve) => setImmediate(resolve));
    const queued = [1, 2].map(answered);
    release_first();
    await Promise.all([first, ...queued]);
    assert.deepEqual(log, ['applied 0', 'applied 1+2', 'answered 0', 'answered 1', 'answered 2']);

    // a batch that fails runs its items alone before the batch after it applies
    log.length = 0;
    const failing = [13, 4].map(answered);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [5].map(answered);
    await Promise.all([...failing, ...later]);
    assert.deepEqual(log, ['applied 13', 'answered 13', 'applied 4', 'answered 4', 'applied 5', 'answered 5']);
  });

  it('a batch its caller cut follows the same rule: applied together, or each item alone in order, each settled', async () => {
    const calls: string[][] = [];
    const failed: string[][] = [];
    const apply = async (items: string[]) => {
      calls.push(items);
      if (items.includes('poison')) throw new Error(`refused ${items.join('+')}`);
      return items.map((item) => item.toUpperCase());
    };
    const outcome = (settled: PromiseSettledResult<string>) =>
      settled.status === 'fulfilled' ? settled.value : (settled.reason as Error).message;
    assert.deepEqual((await settleBatch(['a', 'b'], apply)).map(outcome), ['A', 'B']);
    assert.deepEqual(calls, [['a', 'b']], 'one call for the whole batch');
    calls.length = 0;
    const settled = await settleBatch(['a', 'poison', 'b'], apply, {
      onBatchFailed: (_error, items) => failed.push([...items]),
    });
    assert.deepEqual(settled.map(outcome), ['A', 'refused poison', 'B']);
    assert.deepEqual(calls, [['a', 'poison', 'b'], ['a'], ['poison'], ['b']], 'then each alone, in arrival order');
    assert.deepEqual(failed, [['a', 'poison', 'b']]);
    assert.deepEqual(await settleBatch([], apply), []);
    // an error no item gets past alone refuses them all at once
    const down = new Error('database down');
    calls.length = 0;
    const refused = await settleBatch(
      ['a', 'b'],
      async (items: string[]): Promise<string[]> => {
        calls.push(items);
        throw down;
      },
      { refusesEveryItem: (error) => error === down },
    );
    assert.deepEqual(refused.map(outcome), ['database down', 'database down']);
    assert.deepEqual(calls, [['a', 'b']]);
  });
});

describe('lone in-process transfers under load: grouped, yet each exactly as if alone', () => {
  let t: TestApp;
  let ledger: Ledger;
  before(async () => {
    t = await startTestApp();
    ledger = t.application.ledger;
  });
  after(() => t.close());

  it('64 concurrent transfers, replays and a conflict: no overdraft, one journal row per key, every answer its own', async () => {
    const funded = Array.from({ length: 4 }, (_, i) => account(`group-src-${i}`));
    const sink = account('group-sink');
    for (const [i, name] of funded.entries()) {
      await ledger.transfer({
        key: `group-fund-${i}`,
        kind: 'mint',
        debit_account: WORLD,
        credit_account: name,
        amount_micro_pay: 100,
      });
    }
    // 16 debits of 10 from each account of 100: exactly 10 of each 16 can apply, whatever the order
    const spends = funded.flatMap((name, i) =>
      Array.from({ length: 16 }, (_, j) => ({
        key: `group-spend-${i}-${j}`,
        kind: 'transfer' as const,
        debit_account: name,
        credit_account: sink,
        amount_micro_pay: 10,
      })),
    );
    const mint = {
      key: 'group-mint-twice',
      kind: 'mint' as const,
      debit_account: WORLD,
      credit_account: sink,
      amount_micro_pay: 7,
    };
    const outcomes = await Promise.allSettled(
      [...spends, mint, mint, mint, { ...mint, amount_micro_pay: 8 }].map((command) => ledger.transfer(command)),
    );
    const code = (outcome: PromiseSettledResult<TransferResult>) =>
      outcome.status === 'fulfilled' ? 'ok' : (outcome.reason as { code: string }).code;

    for (let i = 0; i < funded.length; i++) {
      const own = outcomes.slice(i * 16, i * 16 + 16).map(code);
      assert.equal(own.filter((c) => c === 'ok').length, 10, `account ${i}: ${own.join(',')}`);
      assert.equal(own.filter((c) => c === 'LEDGER_INSUFFICIENT_FUNDS').length, 6);
      assert.equal(await ledger.balance(funded[i]!), 0);
    }
    // Concurrent requests with one key have no order between them: whichever runs first applies, and each of the
    // others, as if alone after it, replays it (the same fields) or conflicts (other fields).
    const mints = outcomes.slice(spends.length);
    const applied = mints.filter(
      (outcome): outcome is PromiseFulfilledResult<TransferResult> =>
        outcome.status === 'fulfilled' && !outcome.value.replayed,
    );
    assert.equal(applied.length, 1, 'one mint applied');
    const first_amount = applied[0]!.value.amount_micro_pay;
    if (first_amount === 7) {
      assert.deepEqual(mints.map(code), ['ok', 'ok', 'ok', 'LEDGER_IDEMPOTENCY_CONFLICT']);
      const ids = new Set(
        mints.slice(0, 3).map((outcome) => (outcome as PromiseFulfilledResult<TransferResult>).value.id),
      );
      assert.equal(ids.size, 1, 'the three identical mints are one transfer, two of them replayed');
    } else {
      assert.equal(first_amount, 8);
      assert.deepEqual(mints.map(code), [
        'LEDGER_IDEMPOTENCY_CONFLICT',
        'LEDGER_IDEMPOTENCY_CONFLICT',
        'LEDGER_IDEMPOTENCY_CONFLICT',
        'ok',
      ]);
    }
    assert.equal(await ledger.balance(sink), 4 * 100 + first_amount);

    const journal = await t.db
      .selectFrom('ledger_transfers')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('key', 'like', 'group-%')
      .executeTakeFirstOrThrow();
    assert.equal(Number(journal.n), 4 + 4 * 10 + 1);
    const verification = await ledger.verify();
    assert.equal(verification.ok, true, verification.problems.join('; '));
  });

  it('a malformed lone transfer is refused before it joins a group; the others apply', async () => {
    const outcomes = await Promise.allSettled([
      ledger.transfer({
        key: 'group-bad',
        kind: 'transfer',
        debit_account: account('group-x'),
        credit_account: account('group-x'),
        amount_micro_pay: 1,
      }),
      ledger.transfer({
        key: 'group-good',
        kind: 'mint',
        debit_account: WORLD,
        credit_account: account('group-x'),
        amount_micro_pay: 5,
      }),
    ]);
    assert.equal(outcomes[0].status, 'rejected');
    assert.equal((outcomes[0] as PromiseRejectedResult).reason.code, 'VALIDATION_ERROR');
    assert.equal(outcomes[1].status, 'fulfilled');
    assert.equal(await ledger.balance(account('group-x')), 5);
  });
});
