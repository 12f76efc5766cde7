import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../src/lib/errors.ts';
import { createInProcessLedger } from '../../src/modules/ledger/in-process.ts';
import { accounts, type Ledger, type TransferCommand } from '../../src/modules/ledger/port.ts';
import type { ReceiptCheck, ValidatorOutcome, ValidatorVerdict } from '../../src/modules/validators/port.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { createPendingFunds, receipt } from '../helpers/pending-funds.ts';
import { ScriptedValidator } from '../helpers/validator.ts';

/** Answers by the receipt's bytes, so concurrent confirms get the outcome their test row was given. */
class ByReceipt extends ScriptedValidator {
  readonly outcomes = new Map<string, ValidatorOutcome>();
  /** The bank reference the validator reads off a receipt (a slip without a QR, as a provider reads it). */
  readonly references = new Map<string, string>();
  override async validate(check: ReceiptCheck): Promise<ValidatorVerdict> {
    const receipt = Buffer.from(check.image).toString('base64');
    const outcome = this.outcomes.get(receipt);
    if (outcome) this.next.unshift(outcome);
    const verdict = await super.validate(check);
    const reference = this.references.get(receipt);
    return reference ? { ...verdict, reference, sending_bank: '4' } : verdict;
  }
}

/** The in-process ledger, unreachable (LEDGER_UNAVAILABLE) for the transfers whose key is in `down`. */
function ledgerDownFor(down: Set<string>): Ledger & { attach(t: TestApp): void } {
  let inner: Ledger | undefined;
  const ready = () => inner ?? assert.fail('attach() first');
  const check = (commands: readonly TransferCommand[]) => {
    if (commands.some((command) => down.has(command.key)))
      throw new AppError('LEDGER_UNAVAILABLE', 'ledger unreachable (test switch)');
  };
  return {
    kind: 'in_process',
    attach(t) {
      inner = createInProcessLedger({ db: t.db, clock: t.clock });
    },
    async transfer(command, options) {
      check([command]);
      return ready().transfer(command, options);
    },
    async transferAll(commands, options) {
      check(commands);
      return ready().transferAll(commands, options);
    },
    async transferBatch(commands, options) {
      check(commands);
      return ready().transferBatch(commands, options);
    },
    balance: (account, options) => ready().balance(account, options),
    balances: (names, options) => ready().balances(names, options),
    creditedSince: (account, since, options) => ready().creditedSince(account, since, options),
    verify: () => ready().verify(),
  };
}

interface Row {
  id: string;
  receiver: TestMerchant;
  amount: number;
  outcome: ValidatorOutcome;
  /** The ledger is down for this row's mint while the confirms run. */
  ledger_down?: boolean;
}

// A validator that asks a provider has its verdict stored before the confirm joins its batch; one that reads the
// receipt locally is judged by the batch, its verdict written in the batch's transaction: both keep every rule below.
for (const kind of ['easyslip', 'null_validator'] as const)
  describe(`receiver-confirm: many confirms at once, written in batches, each with its own answer (${kind})`, () => {
    let t: TestApp;
    let receivers: TestMerchant[];
    const validator = new ByReceipt({ kind });
    const down = new Set<string>();
    const ledger = ledgerDownFor(down);

    before(async () => {
      t = await startTestApp({ overrides: { validator, ledger } });
      ledger.attach(t);
      receivers = [await t.createMerchant('Receiver A'), await t.createMerchant('Receiver B')];
    });
    after(() => t.close());

    const confirmBody = (row: Row) => {
      const body = receipt();
      validator.outcomes.set(body.receipt_base64, row.outcome);
      return body;
    };
    const confirm = (row: Row, body: ReturnType<typeof receipt>) =>
      t.call('POST', `/v1/pending-funds/${row.id}/receiver-confirm`, row.receiver.live, body);
    const audits = (id: string) =>
      t.db
        .selectFrom('receiver_confirm_audit')
        .selectAll()
        .where('pending_funds_id', '=', id)
        .where('stage', '=', 'receiver_confirm')
        .execute();

    it('verified, failed, timeout, duplicates of one row and ledger failures: each confirm answered alone, state consistent', async () => {
      const rows: Row[] = [];
      const plan: [ValidatorOutcome, number, boolean][] = [
        ['verified', 8, false],
        ['failed', 3, false],
        ['timeout', 3, false],
        ['verified', 3, true],
      ];
      let amount = 1_000_000;
      for (const [outcome, count, ledger_down] of plan)
        for (let i = 0; i < count; i += 1) {
          const receiver = receivers[rows.length % 2] as TestMerchant;
          amount += 10_000;
          const created = await createPendingFunds(t, receiver.id, amount);
          assert.equal(created.statusCode, 201, created.body);
          assert.equal(created.json().data.status, 'validated_pending_receiver_confirm');
          rows.push({ id: created.json().data.id, receiver, amount, outcome, ledger_down });
          if (ledger_down) down.add(created.json().data.id);
        }
      // the same receipt sent three times for three verified rows; four timeouts with four receipts on one row
      const calls: { row: Row; body: ReturnType<typeof receipt> }[] = rows.map((row) => ({
        row,
        body: confirmBody(row),
      }));
      for (const row of rows.filter((r) => r.outcome === 'verified' && !r.ledger_down).slice(0, 3)) {
        const sent = calls.find((call) => call.row === row)?.body as ReturnType<typeof receipt>;
        calls.push({ row, body: sent }, { row, body: sent });
      }
      const waiting = rows.find((row) => row.outcome === 'timeout') as Row;
      for (let i = 0; i < 3; i += 1) calls.push({ row: waiting, body: confirmBody(waiting) });
      assert.ok(calls.length >= 20);

      const responses = await Promise.all(calls.map((call) => confirm(call.row, call.body)));
      down.clear();

      for (const row of rows) {
        const answers = responses.filter((_, index) => calls[index]?.row === row);
        const ok = answers.filter((response) => response.statusCode === 201);
        const current = await t.db
          .selectFrom('pending_funds')
          .selectAll()
          .where('id', '=', row.id)
          .executeTakeFirstOrThrow();
        const applied = (await audits(row.id)).filter((audit) => audit.applied);
        // one audit row per applied attempt, each the answer's own
        assert.deepEqual(applied.map((audit) => audit.id).sort(), ok.map((r) => r.json().data.audit_id).sort());
        const mints = await t.db.selectFrom('ledger_transfers').selectAll().where('key', '=', row.id).execute();
        const confirmed_events = await t.db
          .selectFrom('events')
          .select('payload')
          .where('resource_id', '=', row.id)
          .where('type', '=', 'pending_funds.confirmed')
          .execute();

        if (row.ledger_down) {
          assert.deepEqual(
            answers.map((r) => [r.statusCode, r.json().error?.code]),
            [[502, 'PENDING_FUNDS_LEDGER_UNAVAILABLE']],
          );
          assert.equal((await audits(row.id)).length, 0, 'no audit row');
          assert.deepEqual([current.status, current.attempts], ['validated_pending_receiver_confirm', 0]);
          assert.equal(mints.length, 0);
        } else if (row.outcome === 'verified') {
          assert.equal(ok.length, 1, 'one confirm of the row applies');
          for (const refused of answers.filter((r) => r.statusCode !== 201)) {
            assert.equal(refused.statusCode, 409);
            assert.equal(refused.json().error.code, 'PENDING_FUNDS_TERMINAL');
          }
          const view = ok[0]?.json().data;
          assert.deepEqual([view.outcome, view.pending_funds.status], ['verified', 'confirmed']);
          assert.equal(mints.length, 1, 'minted once');
          assert.equal(Number(mints[0]?.amount_micro_pay), row.amount);
          assert.deepEqual(
            [current.status, current.attempts, current.ledger_transfer_id],
            ['confirmed', 1, mints[0]?.id],
          );
          assert.equal(view.pending_funds.ledger_transfer_id, mints[0]?.id);
          assert.equal(confirmed_events.length, 1, 'one event per confirmed row');
          const payload = confirmed_events[0]?.payload as { data: { ledger_transfer_id: string } };
          assert.equal(payload.data.ledger_transfer_id, mints[0]?.id);
        } else if (row.outcome === 'failed') {
          assert.deepEqual(
            answers.map((r) => [r.statusCode, r.json().data.outcome, r.json().data.pending_funds.status]),
            [[201, 'failed', 'failed']],
          );
          assert.equal(current.status, 'failed');
          assert.equal(mints.length, 0);
        } else {
          assert.ok(answers.every((r) => r.statusCode === 201 && r.json().data.outcome === 'timeout'));
          assert.deepEqual([current.status, current.attempts], ['validated_pending_receiver_confirm', answers.length]);
          assert.deepEqual(
            ok.map((r) => r.json().data.pending_funds.attempts).sort(),
            Array.from({ length: answers.length }, (_, i) => i + 1),
            'each answer shows the row as its own confirm left it',
          );
          assert.equal(mints.length, 0);
        }
        if (row.outcome !== 'verified' || row.ledger_down) assert.equal(confirmed_events.length, 0);
      }

      // each receiver's balance is the sum of its confirmed rows
      for (const receiver of receivers) {
        const confirmed = rows.filter(
          (row) => row.receiver === receiver && row.outcome === 'verified' && !row.ledger_down,
        );
        assert.equal(
          await t.application.ledger.balance(accounts.merchantAvailable(receiver.id, false)),
          confirmed.reduce((sum, row) => sum + row.amount, 0),
        );
      }

      // the ledger is back: the confirms that got 502 are retried and confirm once, with the stored verdict
      const calls_before = validator.calls;
      for (const row of rows.filter((r) => r.ledger_down)) {
        const body = calls.find((call) => call.row === row)?.body as ReturnType<typeof receipt>;
        const retry = await confirm(row, body);
        assert.equal(retry.statusCode, 201, retry.body);
        assert.equal(retry.json().data.pending_funds.status, 'confirmed');
      }
      assert.equal(validator.calls, calls_before, 'the stored verdicts are reused');
      assert.equal((await t.application.ledger.verify()).ok, true);
    });
    it('one slip sent for several rows at once: one row accepts it, every other is duplicate_slip, nothing minted twice', async () => {
      const body = receipt();
      validator.outcomes.set(body.receipt_base64, 'verified');
      const rows: Row[] = [];
      for (let i = 0; i < 6; i += 1) {
        const receiver = receivers[i % 2] as TestMerchant;
        const created = await createPendingFunds(t, receiver.id, 2_000_000 + i);
        assert.equal(created.statusCode, 201, created.body);
        rows.push({ id: created.json().data.id, receiver, amount: 2_000_000 + i, outcome: 'verified' });
      }
      const answers = await Promise.all(rows.map((row) => confirm(row, body)));
      assert.deepEqual(
        answers.map((r) => r.statusCode),
        rows.map(() => 201),
      );
      const outcomes = answers.map((r) => [
        r.json().data.outcome,
        r.json().data.reason,
        r.json().data.pending_funds.status,
      ]);
      assert.deepEqual(
        outcomes.filter(([outcome]) => outcome === 'verified'),
        [['verified', null, 'confirmed']],
      );
      assert.deepEqual(
        outcomes.filter(([outcome]) => outcome !== 'verified'),
        rows.slice(1).map(() => ['failed', 'duplicate_slip', 'failed']),
      );
      const winner = rows[answers.findIndex((r) => r.json().data.outcome === 'verified')] as Row;
      const accepted = await t.db
        .selectFrom('slips')
        .select(['owner', 'accepted'])
        .where(
          'owner',
          'in',
          rows.map((row) => `pending_funds:${row.id}`),
        )
        .where('sha256', '=', createHash('sha256').update(Buffer.from(body.receipt_base64, 'base64')).digest('hex'))
        .where('accepted', '=', true)
        .execute();
      assert.deepEqual(accepted, [{ owner: `pending_funds:${winner.id}`, accepted: true }]);
      const mints = await t.db
        .selectFrom('ledger_transfers')
        .select('key')
        .where(
          'key',
          'in',
          rows.map((row) => row.id),
        )
        .execute();
      assert.deepEqual(mints, [{ key: winner.id }]);
    });
    it('one transfer shown on several receipts at once (the reference the validator reads): one row accepts it, the others are duplicate_slip', async () => {
      const rows: Row[] = [];
      const bodies: ReturnType<typeof receipt>[] = [];
      const reference = `REF${Date.now()}${kind}`;
      for (let i = 0; i < 4; i += 1) {
        const receiver = receivers[i % 2] as TestMerchant;
        const created = await createPendingFunds(t, receiver.id, 3_000_000 + i);
        assert.equal(created.statusCode, 201, created.body);
        rows.push({ id: created.json().data.id, receiver, amount: 3_000_000 + i, outcome: 'verified' });
        const body = receipt();
        validator.outcomes.set(body.receipt_base64, 'verified');
        validator.references.set(body.receipt_base64, reference);
        bodies.push(body);
      }
      const answers = await Promise.all(rows.map((row, i) => confirm(row, bodies[i] as ReturnType<typeof receipt>)));
      const outcomes = answers.map((r) => [r.statusCode, r.json().data.outcome, r.json().data.reason]);
      assert.deepEqual(
        outcomes.filter(([, outcome]) => outcome === 'verified'),
        [[201, 'verified', null]],
      );
      assert.deepEqual(
        outcomes.filter(([, outcome]) => outcome !== 'verified'),
        [1, 2, 3].map(() => [201, 'failed', 'duplicate_slip']),
      );
      const accepted = await t.db
        .selectFrom('slips')
        .select(['identity', 'sending_bank'])
        .where('reference', '=', reference)
        .where('accepted', '=', true)
        .execute();
      assert.deepEqual(accepted, [{ identity: `004:${reference}`, sending_bank: '004' }]);
    });
  });
