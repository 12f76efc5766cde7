import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { INTAKE_MAX_ATTEMPTS, INTAKE_RETRY_BASE_MS } from '../../src/modules/pending-funds/intake.ts';
import { sweepPendingFunds } from '../../src/modules/pending-funds/service.ts';
import { revalidatePendingFunds } from '../../src/modules/pending-funds/revalidation.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { createPendingFunds, PNG_BASE64, receipt } from '../helpers/pending-funds.ts';
import { ScriptedValidator } from '../helpers/validator.ts';

const MINUTE = 60_000;
const HOUR = 3600_000;

/**
 * A pending-funds row whose intake validation was unverified or timed out is validated again in the
 * background with backoff (receipt kept at intake, each attempt an intake audit row), moves as the contract says on
 * a verdict, and after the last attempt is left to expire at its TTL with the reason recorded.
 */
describe('pending funds: background revalidation of an inconclusive intake', () => {
  let t: TestApp;
  let receiver: TestMerchant;
  const validator = new ScriptedValidator({ failure_reason: 'slip_not_found' });
  const row = (id: string) =>
    t.db.selectFrom('pending_funds').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const revalidate = () => revalidatePendingFunds(deps);
  let deps: Parameters<typeof revalidatePendingFunds>[0];
  const intakeAudit = (id: string) =>
    t.db
      .selectFrom('receiver_confirm_audit')
      .selectAll()
      .where('pending_funds_id', '=', id)
      .where('stage', '=', 'intake')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  const events = async (id: string) =>
    (await t.db.selectFrom('events').select('type').where('resource_id', '=', id).orderBy('seq').execute()).map(
      (e) => e.type,
    );

  async function inconclusive(outcome: 'unverified' | 'timeout'): Promise<string> {
    validator.next = [outcome];
    const created = await createPendingFunds(t, receiver.id);
    assert.equal(created.statusCode, 201, created.body);
    const data = created.json().data;
    assert.equal(data.status, 'pending_validation');
    assert.equal(data.intake_attempts, 1);
    assert.equal(data.next_intake_attempt_at, new Date(t.clock.now().getTime() + INTAKE_RETRY_BASE_MS).toISOString());
    return data.id;
  }

  before(async () => {
    t = await startTestApp({ overrides: { validator } });
    receiver = await t.createMerchant('Receiver');
    // The scheduled job's dependencies, on the application's database, clock, ledger and validator.
    const { createRevalidationMetrics } = await import('../../src/modules/pending-funds/revalidation.ts');
    const { Registry } = await import('prom-client');
    deps = {
      db: t.db,
      clock: t.clock,
      ledger: t.application.ledger,
      validator,
      max_attempts: t.application.config.receiver_confirm_max_attempts,
      ttl_hours: t.application.config.pending_funds_ttl_hours,
      window_hours: t.application.config.receiver_confirm_window_hours,
      revalidations: createRevalidationMetrics(new Registry()),
    };
  });
  after(() => t.close());

  it('a timed-out intake keeps the receipt, waits for its backoff, then a verified revalidation makes it confirmable', async () => {
    const id = await inconclusive('timeout');
    const stored = await t.db
      .selectFrom('pending_funds_receipts')
      .selectAll()
      .where('pending_funds_id', '=', id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      Buffer.from(stored.data).subarray(0, 12),
      Buffer.from(PNG_BASE64, 'base64'),
      'the receipt sent at intake (the helper makes each one unique)',
    );
    assert.equal(stored.content_type, 'image/png');
    assert.equal(stored.sha256, (await row(id)).receipt_sha256);
    // Not due yet: nothing is claimed, the validator is not asked.
    const calls = validator.calls;
    t.clock.advance(INTAKE_RETRY_BASE_MS - 1);
    assert.equal(await revalidate(), 0);
    assert.equal(validator.calls, calls);
    t.clock.advance(1);
    validator.next = ['verified'];
    assert.equal(await revalidate(), 1);
    assert.equal(validator.calls, calls + 1);
    const validated = await row(id);
    assert.equal(validated.status, 'validated_pending_receiver_confirm');
    assert.equal(validated.intake_attempts, 2);
    assert.equal(validated.intake_next_attempt_at, null);
    assert.equal(validated.validated_at?.getTime(), t.clock.now().getTime());
    assert.deepEqual(await events(id), ['pending_funds.validated']);
    const audit = await intakeAudit(id);
    assert.deepEqual(
      audit.map((a) => [a.outcome, a.status_before, a.status_after, a.applied]),
      [
        ['timeout', 'pending_validation', 'pending_validation', true],
        ['verified', 'pending_validation', 'validated_pending_receiver_confirm', true],
      ],
    );
    assert.ok(audit.every((a) => a.receipt_sha256 === validated.receipt_sha256 && a.actor_merchant_id === null));
    // The receiver-confirm audit keeps its meaning: no rows until the receiver calls.
    assert.equal((await t.admin('GET', `/admin/audit/receiver-confirm?pending_funds_id=${id}`)).json().data.length, 0);
    assert.equal(
      (await t.admin('GET', `/admin/audit/receiver-confirm?pending_funds_id=${id}&stage=intake`)).json().data.length,
      2,
    );
    // Nothing left to do for it.
    t.clock.advance(24 * HOUR);
    assert.equal(await revalidate(), 0);
    validator.next = ['verified'];
    const confirmed = await t.call('POST', `/v1/pending-funds/${id}/receiver-confirm`, receiver.live, receipt());
    assert.equal(confirmed.statusCode, 201, confirmed.body);
    assert.equal(confirmed.json().data.pending_funds.status, 'confirmed');
    assert.equal((await t.admin('GET', `/admin/audit/receiver-confirm?pending_funds_id=${id}`)).json().data.length, 1);
  });

  it('a failed revalidation fails the row with the validator code and pending_funds.failed', async () => {
    const id = await inconclusive('unverified');
    t.clock.advance(INTAKE_RETRY_BASE_MS);
    validator.next = ['failed'];
    assert.equal(await revalidate(), 1);
    const failed = await row(id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.failure_reason, 'slip_not_found');
    assert.equal(failed.intake_next_attempt_at, null);
    assert.deepEqual(await events(id), ['pending_funds.failed']);
    assert.deepEqual(
      (await intakeAudit(id)).map((a) => a.outcome),
      ['unverified', 'failed'],
    );
  });

  it('backs off 5, 10, 20, 40, 80 min; after the last attempt it is left to expire at the TTL with intake_validation_unverified', async () => {
    const id = await inconclusive('unverified');
    validator.fallback = 'timeout';
    try {
      const created_at = (await row(id)).created_at.getTime();
      let at = created_at;
      const waits: number[] = [];
      for (let attempt = 2; attempt <= INTAKE_MAX_ATTEMPTS; attempt++) {
        const due = (await row(id)).intake_next_attempt_at!.getTime();
        waits.push((due - at) / MINUTE);
        t.clock.advance(due - t.clock.now().getTime());
        at = due;
        assert.equal(await revalidate(), 1, `attempt ${attempt}`);
        assert.equal((await row(id)).intake_attempts, attempt);
      }
      assert.deepEqual(waits, [5, 10, 20, 40, 80]);
      const last = await row(id);
      assert.equal(last.status, 'pending_validation');
      assert.equal(last.intake_next_attempt_at, null);
      assert.equal(last.intake_attempts, INTAKE_MAX_ATTEMPTS);
      assert.equal((await intakeAudit(id)).length, INTAKE_MAX_ATTEMPTS);
      // Out of attempts: no more validator calls, however long it waits.
      const calls = validator.calls;
      t.clock.advance(24 * HOUR);
      assert.equal(await revalidate(), 0);
      assert.equal(validator.calls, calls);
      // The TTL sweep expires it and says why.
      t.clock.set(new Date(last.expires_at.getTime()));
      assert.ok((await sweepPendingFunds(deps)) >= 1);
      const expired = await row(id);
      assert.equal(expired.status, 'expired');
      assert.equal(expired.failure_reason, 'intake_validation_unverified');
      assert.deepEqual(await events(id), ['pending_funds.expired']);
      const read = await t.call('GET', `/v1/pending-funds/${id}`, receiver.live);
      assert.equal(read.json().data.failure_reason, 'intake_validation_unverified');
      assert.equal(read.json().data.intake_attempts, INTAKE_MAX_ATTEMPTS);
      const counted = Object.fromEntries(
        (await deps.revalidations!.get()).values.map((v) => [String(v.labels['outcome']), v.value]),
      );
      assert.equal(counted['exhausted'], 1);
    } finally {
      validator.fallback = 'verified';
    }
  });

  it('runs as the scheduled pending-funds-revalidation job', async () => {
    const id = await inconclusive('timeout');
    t.clock.advance(INTAKE_RETRY_BASE_MS);
    validator.next = ['verified'];
    t.application.scheduler.start();
    try {
      for (let i = 0; i < 200 && (await row(id)).status === 'pending_validation'; i++)
        await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      await t.application.scheduler.stop();
    }
    assert.equal((await row(id)).status, 'validated_pending_receiver_confirm');
  });

  it('a row without a stored receipt (created before the receipts were kept) is left to its TTL without a validator call', async () => {
    const id = await inconclusive('unverified');
    await t.db.deleteFrom('pending_funds_receipts').where('pending_funds_id', '=', id).execute();
    t.clock.advance(INTAKE_RETRY_BASE_MS);
    const calls = validator.calls;
    assert.equal(await revalidate(), 1);
    assert.equal(validator.calls, calls);
    const left = await row(id);
    assert.equal(left.status, 'pending_validation');
    assert.equal(left.intake_next_attempt_at, null);
    assert.equal(await revalidate(), 0);
  });

  it('a row past its TTL is not revalidated; a claimed row is not taken twice', async () => {
    const late = await inconclusive('timeout');
    t.clock.set(new Date((await row(late)).expires_at.getTime()));
    const calls = validator.calls;
    assert.equal(await revalidate(), 0);
    assert.equal(validator.calls, calls);
    await sweepPendingFunds(deps);
    assert.equal((await row(late)).status, 'expired');

    const id = await inconclusive('timeout');
    t.clock.advance(INTAKE_RETRY_BASE_MS);
    validator.next = ['unverified'];
    const passes = await Promise.all([revalidate(), revalidate()]);
    assert.equal(passes[0]! + passes[1]!, 1);
    assert.equal(validator.calls, calls + 2);
    assert.equal((await row(id)).intake_attempts, 2);
  });
});
