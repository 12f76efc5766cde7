import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { accounts, type Ledger, type TransferCommand } from '../../src/modules/ledger/port.ts';
import { seededRandom } from '../helpers/random.ts';

describe('ledger: randomized mixed mints, burns and transfers', () => {
  let t: TestApp;
  let ledger: Ledger;
  before(async () => {
    t = await startTestApp();
    ledger = t.application.ledger;
  });
  after(() => t.close());

  it('keeps every invariant after each batch of concurrent operations', async () => {
    const seed = Number(process.env['LEDGER_SEED'] ?? Date.now() % 1_000_000);
    const random = seededRandom(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const holders = Array.from({ length: 12 }, (_, i) =>
      accounts.merchantAvailable(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, false),
    );
    const issuers = [accounts.world(false), accounts.adjustments(false), accounts.mintSource('treasury', false)];
    const expected = new Map<string, number>();
    const applied: TransferCommand[] = [];
    const add = (account: string, delta: number) => expected.set(account, (expected.get(account) ?? 0) + delta);
    const counts = { applied: 0, replayed: 0, insufficient: 0, conflict: 0 };
    const total_ops = Number(process.env['LEDGER_OPS'] ?? 3000);
    const batch_size = 50;

    for (let batch = 0; batch * batch_size < total_ops; batch += 1) {
      const commands: TransferCommand[] = [];
      for (let i = 0; i < batch_size; i += 1) {
        const roll = random();
        const key = `r-${batch}-${i}`;
        const amount_micro_pay = 1 + Math.floor(random() * 5_000);
        if (roll < 0.3)
          commands.push({
            key,
            kind: 'mint',
            debit_account: pick(issuers),
            credit_account: pick(holders),
            amount_micro_pay,
          });
        else if (roll < 0.5)
          commands.push({
            key,
            kind: 'burn',
            debit_account: pick(holders),
            credit_account: pick(issuers),
            amount_micro_pay,
          });
        else if (roll < 0.9) {
          const from = pick(holders);
          let to = pick(holders);
          while (to === from) to = pick(holders);
          commands.push({ key, kind: 'transfer', debit_account: from, credit_account: to, amount_micro_pay });
        } else if (applied.length > 0) {
          const earlier = pick(applied);
          // a retry of an applied command (replay) or the same key with another amount (conflict)
          commands.push(
            random() < 0.5 ? { ...earlier } : { ...earlier, amount_micro_pay: earlier.amount_micro_pay + 1 },
          );
        }
      }
      const results = await Promise.allSettled(commands.map((command) => ledger.transfer(command)));
      results.forEach((result, index) => {
        const command = commands[index]!;
        if (result.status === 'fulfilled') {
          if (result.value.replayed) {
            counts.replayed += 1;
            return;
          }
          counts.applied += 1;
          applied.push(command);
          add(command.debit_account, -command.amount_micro_pay);
          add(command.credit_account, command.amount_micro_pay);
        } else {
          const code = (result.reason as { code?: string }).code;
          if (code === 'LEDGER_INSUFFICIENT_FUNDS') counts.insufficient += 1;
          else if (code === 'LEDGER_IDEMPOTENCY_CONFLICT') counts.conflict += 1;
          else throw result.reason;
        }
      });
      const verification = await ledger.verify();
      assert.equal(verification.ok, true, `seed ${seed} batch ${batch}: ${verification.problems.join('; ')}`);
      const balances = await ledger.balances([...expected.keys()]);
      for (const [account, balance] of expected)
        assert.equal(balances.get(account), balance, `seed ${seed} batch ${batch}: ${account}`);
    }
    assert.ok(counts.applied > total_ops / 3, JSON.stringify(counts));
    assert.ok(counts.insufficient > 0 && counts.replayed > 0 && counts.conflict > 0, JSON.stringify(counts));
    const final = await ledger.verify();
    assert.equal(final.transfers, counts.applied);
  });
});
