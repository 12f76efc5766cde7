import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ADMIN_HEADERS, startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { accounts } from '../../src/modules/ledger/port.ts';
import { sweepPendingFunds } from '../../src/modules/pending-funds/service.ts';
import { createPendingFunds, receipt } from '../helpers/pending-funds.ts';
import { ScriptedValidator } from '../helpers/validator.ts';

const HOUR = 3600_000;

describe('pending funds: intake, receiver-confirm rules, sweeps and audit', () => {
  let t: TestApp;
  let receiver: TestMerchant;
  let other: TestMerchant;
  const validator = new ScriptedValidator({ failure_reason: 'slip_not_found' });
  const confirm = (id: string, key: string, body: unknown = receipt()) =>
    t.call('POST', `/v1/pending-funds/${id}/receiver-confirm`, key, body);
  const row = async (id: string) =>
    t.db.selectFrom('pending_funds').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const auditCount = async (id: string, stage = 'receiver_confirm') =>
    Number(
      (
        await t.db
          .selectFrom('receiver_confirm_audit')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('pending_funds_id', '=', id)
          .where('stage', '=', stage as never)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const available = (merchant_id: string) =>
    t.application.ledger.balance(accounts.merchantAvailable(merchant_id, false));
  async function fresh(amount_minor = 5_000_000): Promise<string> {
    validator.next = [];
    const created = await createPendingFunds(t, receiver.id, amount_minor);
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json().data.status, 'validated_pending_receiver_confirm');
    return created.json().data.id;
  }

  before(async () => {
    t = await startTestApp({ overrides: { validator } });
    receiver = await t.createMerchant('Receiver');
    other = await t.createMerchant('Other');
  });
  after(() => t.close());

  it('intake: 201 validated with one intake audit row; failed intake is failed with the validator code; 401, 404, 400 without a row', async () => {
    const id = await fresh();
    assert.equal(await auditCount(id, 'intake'), 1);
    validator.next = ['failed'];
    const failed = await createPendingFunds(t, receiver.id);
    assert.equal(failed.statusCode, 201);
    assert.equal(failed.json().data.status, 'failed');
    assert.equal(failed.json().data.failure_reason, 'slip_not_found');

    const before_rows = (await t.db.selectFrom('pending_funds').select('id').execute()).length;
    const no_token = await t.request({
      method: 'POST',
      url: '/internal/pending-funds',
      payload: { receiver_merchant_id: receiver.id, amount_minor: 1, payer_reference: 'x', ...receipt() },
    });
    assert.equal(no_token.statusCode, 401);
    assert.equal((await createPendingFunds(t, '00000000-0000-4000-8000-000000000000')).statusCode, 404);
    const bad_type = await createPendingFunds(t, receiver.id, 1, { content_type: 'text/plain' });
    assert.equal(bad_type.json().error.code, 'RECEIVER_CONFIRM_CONTENT_TYPE_UNSUPPORTED');
    const bad_b64 = await createPendingFunds(t, receiver.id, 1, { receipt_base64: '***' });
    assert.equal(bad_b64.json().error.code, 'RECEIVER_CONFIRM_MALFORMED_RECEIPT');
    assert.equal((await createPendingFunds(t, receiver.id, 0)).statusCode, 400);
    assert.equal((await t.db.selectFrom('pending_funds').select('id').execute()).length, before_rows);
  });

  it('verified: 201, row confirmed, PAY minted once with key = row id, one audit row, event recorded', async () => {
    const id = await fresh(7_000_000);
    const before_balance = await available(receiver.id);
    const response = await confirm(id, receiver.live);
    assert.equal(response.statusCode, 201, response.body);
    const data = response.json().data;
    assert.equal(data.outcome, 'verified');
    assert.equal(data.pending_funds.status, 'confirmed');
    assert.equal(await available(receiver.id), before_balance + 7_000_000);
    const transfer = await t.db.selectFrom('ledger_transfers').selectAll().where('key', '=', id).execute();
    assert.equal(transfer.length, 1);
    assert.equal(transfer[0]!.kind, 'mint');
    assert.equal((await row(id)).ledger_transfer_id, transfer[0]!.id);
    assert.equal(await auditCount(id), 1);
    const events = await t.db.selectFrom('events').select('type').where('resource_id', '=', id).execute();
    assert.ok(events.some((event) => event.type === 'pending_funds.confirmed'));

    const again = await confirm(id, receiver.live);
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().error.code, 'PENDING_FUNDS_TERMINAL');
    assert.equal(await auditCount(id), 1);
  });

  it('rule 1: another merchant is 403 PENDING_FUNDS_NOT_RECEIVER; a test key is 403 SANDBOX_ONLY; 401 without a key; 404 unknown id; 400 bad id', async () => {
    const id = await fresh();
    const foreign = await confirm(id, other.live);
    assert.equal(foreign.statusCode, 403);
    assert.equal(foreign.json().error.code, 'PENDING_FUNDS_NOT_RECEIVER');
    for (const key of [receiver.test, receiver.sandbox]) {
      const sandbox = await confirm(id, key);
      assert.equal(sandbox.statusCode, 403);
      assert.equal(sandbox.json().error.code, 'SANDBOX_ONLY');
    }
    assert.equal((await confirm(id, undefined as never)).statusCode, 401);
    assert.equal((await confirm('00000000-0000-4000-8000-000000000000', receiver.live)).statusCode, 404);
    assert.equal((await confirm('not-a-uuid', receiver.live)).statusCode, 400);
    assert.equal(validator.calls > 0, true);
    assert.equal(await auditCount(id), 0);
    assert.equal((await row(id)).attempts, 0);
  });

  it('rule 3: malformed base64 or unsupported content type is 400, the validator is not called and no audit row is written', async () => {
    const id = await fresh();
    const calls = validator.calls;
    for (const [body, code] of [
      [{ receipt_base64: 'not base64!', content_type: 'image/png' }, 'RECEIVER_CONFIRM_MALFORMED_RECEIPT'],
      [{ receipt_base64: 'abc', content_type: 'image/png' }, 'RECEIVER_CONFIRM_MALFORMED_RECEIPT'],
      [{ receipt_base64: '', content_type: 'image/png' }, 'RECEIVER_CONFIRM_MALFORMED_RECEIPT'],
      [
        { receipt_base64: receipt().receipt_base64, content_type: 'image/gif' },
        'RECEIVER_CONFIRM_CONTENT_TYPE_UNSUPPORTED',
      ],
      [{ receipt_base64: receipt().receipt_base64 }, 'VALIDATION_ERROR'],
    ] as const) {
      const response = await confirm(id, receiver.live, body);
      assert.equal(response.statusCode, 400, JSON.stringify(body));
      assert.equal(response.json().error.code, code);
    }
    assert.equal(validator.calls, calls);
    assert.equal(await auditCount(id), 0);
    assert.equal((await row(id)).status, 'validated_pending_receiver_confirm');
  });

  it('rule 2: a row still in pending_validation is 409 PENDING_FUNDS_VALIDATION_UNVERIFIED', async () => {
    validator.next = ['unverified'];
    const created = await createPendingFunds(t, receiver.id);
    assert.equal(created.json().data.status, 'pending_validation');
    const response = await confirm(created.json().data.id, receiver.live);
    assert.equal(response.statusCode, 409);
    assert.equal(response.json().error.code, 'PENDING_FUNDS_VALIDATION_UNVERIFIED');
  });

  it('failed outcome: 201, row failed with the validator code, one audit row, nothing minted', async () => {
    const id = await fresh();
    validator.next = ['failed'];
    const response = await confirm(id, receiver.live);
    assert.equal(response.statusCode, 201);
    assert.equal(response.json().data.outcome, 'failed');
    assert.equal(response.json().data.pending_funds.status, 'failed');
    assert.equal(response.json().data.pending_funds.failure_reason, 'slip_not_found');
    assert.equal(await auditCount(id), 1);
    assert.equal((await t.db.selectFrom('ledger_transfers').select('id').where('key', '=', id).execute()).length, 0);
  });

  it('unverified counts towards RECEIVER_CONFIRM_MAX_ATTEMPTS (5) and then fails with max_attempts_exceeded; timeout increments attempts only', async () => {
    const id = await fresh();
    validator.next = ['timeout', 'unverified', 'unverified', 'timeout', 'unverified', 'unverified'];
    for (let i = 0; i < 6; i += 1) {
      const response = await confirm(id, receiver.live);
      assert.equal(response.statusCode, 201);
      assert.equal(response.json().data.pending_funds.status, 'validated_pending_receiver_confirm');
    }
    let current = await row(id);
    assert.equal(current.attempts, 6);
    assert.equal(current.unverified_attempts, 4);
    validator.next = ['unverified'];
    const last = await confirm(id, receiver.live);
    assert.equal(last.statusCode, 201);
    assert.equal(last.json().data.outcome, 'unverified');
    assert.equal(last.json().data.pending_funds.status, 'failed');
    assert.equal(last.json().data.pending_funds.failure_reason, 'max_attempts_exceeded');
    current = await row(id);
    assert.equal(current.unverified_attempts, 5);
    assert.equal(await auditCount(id), 7);
    assert.equal((await confirm(id, receiver.live)).json().error.code, 'PENDING_FUNDS_TERMINAL');
  });

  it('concurrent verified confirms of one row mint once; the losers are 409 and audited as not applied', async () => {
    const id = await fresh(3_000_000);
    const before_balance = await available(receiver.id);
    const responses = await Promise.all(Array.from({ length: 8 }, () => confirm(id, receiver.live)));
    const statuses = responses.map((response) => response.statusCode).sort();
    assert.deepEqual(statuses, [201, 409, 409, 409, 409, 409, 409, 409]);
    for (const response of responses.filter((r) => r.statusCode === 409))
      assert.equal(response.json().error.code, 'PENDING_FUNDS_TERMINAL');
    assert.equal(await available(receiver.id), before_balance + 3_000_000);
    assert.equal((await t.db.selectFrom('ledger_transfers').select('id').where('key', '=', id).execute()).length, 1);
    const audits = await t.db
      .selectFrom('receiver_confirm_audit')
      .selectAll()
      .where('pending_funds_id', '=', id)
      .where('stage', '=', 'receiver_confirm')
      .execute();
    assert.equal(audits.filter((audit) => audit.applied).length, 1);
    assert.equal((await row(id)).attempts, 1);
  });

  it('concurrent unverified confirms never lose or double-count an attempt', async () => {
    const id = await fresh();
    validator.fallback = 'timeout';
    try {
      const responses = await Promise.all(Array.from({ length: 10 }, () => confirm(id, receiver.live)));
      assert.ok(responses.every((response) => response.statusCode === 201));
    } finally {
      validator.fallback = 'verified';
    }
    const current = await row(id);
    assert.equal(current.attempts, 10);
    assert.equal(await auditCount(id), 10);

    const id2 = await fresh();
    validator.fallback = 'unverified';
    try {
      const responses = await Promise.all(Array.from({ length: 9 }, () => confirm(id2, receiver.live)));
      const created = responses.filter((response) => response.statusCode === 201).length;
      assert.equal(created, 5, 'exactly MAX attempts apply');
      assert.ok(
        responses
          .filter((response) => response.statusCode !== 201)
          .every((response) => response.json().error.code === 'PENDING_FUNDS_TERMINAL'),
      );
    } finally {
      validator.fallback = 'verified';
    }
    const failed = await row(id2);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.unverified_attempts, 5);
    assert.equal(failed.attempts, 5);
    const applied = await t.db
      .selectFrom('receiver_confirm_audit')
      .select('id')
      .where('pending_funds_id', '=', id2)
      .where('stage', '=', 'receiver_confirm')
      .where('applied', '=', true)
      .execute();
    assert.equal(applied.length, 5);
  });

  it('sweeps: TTL without receiver action -> expired; receiver window after a first attempt -> failed; deadlines also apply lazily', async () => {
    const untouched = await fresh();
    const attempted = await fresh();
    validator.next = ['timeout'];
    assert.equal((await confirm(attempted, receiver.live)).statusCode, 201);
    const lazy = await fresh();

    t.clock.advance(24 * HOUR - 1000);
    await sweepPendingFunds({ db: t.db, clock: t.clock });
    assert.equal((await row(attempted)).status, 'validated_pending_receiver_confirm');
    t.clock.advance(2000);
    // this row plus rows of earlier tests that also had a receiver attempt
    assert.ok((await sweepPendingFunds({ db: t.db, clock: t.clock })) >= 1);
    assert.equal((await row(attempted)).status, 'failed');
    assert.equal((await row(attempted)).failure_reason, 'receiver_confirm_window_expired');
    assert.equal((await row(untouched)).status, 'validated_pending_receiver_confirm');

    t.clock.advance(48 * HOUR);
    const late = await confirm(lazy, receiver.live);
    assert.equal(late.statusCode, 409);
    assert.equal(late.json().error.code, 'PENDING_FUNDS_TERMINAL');
    assert.equal((await row(lazy)).status, 'expired');
    assert.ok((await sweepPendingFunds({ db: t.db, clock: t.clock })) >= 1);
    assert.equal((await row(untouched)).status, 'expired');
    assert.equal((await row(untouched)).failure_reason, null);
    assert.equal(await sweepPendingFunds({ db: t.db, clock: t.clock }), 0);
  });

  it('list and read: newest first, status filter, cursor; other merchants and sandbox keys see nothing', async () => {
    const page = await t.call('GET', '/v1/pending-funds?limit=2', receiver.live);
    assert.equal(page.statusCode, 200);
    assert.equal(page.json().data.length, 2);
    assert.equal(page.json().has_more, true);
    const next = await t.call('GET', `/v1/pending-funds?limit=2&cursor=${page.json().next_cursor}`, receiver.live);
    assert.notEqual(next.json().data[0].id, page.json().data[0].id);
    const confirmed = await t.call('GET', '/v1/pending-funds?status=confirmed', receiver.live);
    assert.ok(confirmed.json().data.length >= 2);
    assert.ok(confirmed.json().data.every((item: { status: string }) => item.status === 'confirmed'));
    assert.equal((await t.call('GET', '/v1/pending-funds?status=bogus', receiver.live)).statusCode, 400);
    assert.equal((await t.call('GET', '/v1/pending-funds', other.live)).json().data.length, 0);
    assert.equal((await t.call('GET', '/v1/pending-funds', receiver.test)).json().data.length, 0);
    const id = page.json().data[0].id;
    assert.equal((await t.call('GET', `/v1/pending-funds/${id}`, receiver.live)).json().data.id, id);
    assert.equal((await t.call('GET', `/v1/pending-funds/${id}`, other.live)).statusCode, 404);
    assert.equal((await t.call('GET', `/v1/pending-funds/${id}`, receiver.sandbox)).statusCode, 404);
    assert.equal((await t.call('GET', '/v1/pending-funds', undefined)).statusCode, 401);
  });

  it('audit: list with filters and cursor, detail with the full validator response, 401, 403 ADMIN_FORBIDDEN, 404', async () => {
    const all = await t.admin('GET', '/admin/audit/receiver-confirm?limit=100');
    assert.equal(all.statusCode, 200);
    assert.ok(all.json().data.length > 10);
    assert.equal(all.json().data[0].validator_response, undefined);
    const failed = await t.admin(
      'GET',
      '/admin/audit/receiver-confirm?outcome=failed,timeout&validator_kind=easyslip&stage=receiver_confirm',
    );
    assert.ok(failed.json().data.length > 0);
    assert.ok(failed.json().data.every((audit: { outcome: string }) => ['failed', 'timeout'].includes(audit.outcome)));
    assert.ok(failed.json().data.every((audit: { validator_kind: string }) => audit.validator_kind === 'easyslip'));
    const other_kind = await t.admin('GET', '/admin/audit/receiver-confirm?validator_kind=null_validator');
    assert.deepEqual(other_kind.json().data, []);
    const one = all.json().data[0];
    const by_row = await t.admin('GET', `/admin/audit/receiver-confirm?pending_funds_id=${one.pending_funds_id}`);
    assert.ok(
      by_row
        .json()
        .data.every((audit: { pending_funds_id: string }) => audit.pending_funds_id === one.pending_funds_id),
    );
    const first = await t.admin('GET', '/admin/audit/receiver-confirm?limit=3');
    const second = await t.admin('GET', `/admin/audit/receiver-confirm?limit=3&cursor=${first.json().next_cursor}`);
    assert.equal(
      new Set([...first.json().data, ...second.json().data].map((audit: { id: string }) => audit.id)).size,
      6,
    );
    assert.equal((await t.admin('GET', '/admin/audit/receiver-confirm?limit=101')).statusCode, 400);
    assert.equal((await t.admin('GET', '/admin/audit/receiver-confirm?outcome=maybe')).statusCode, 400);

    const detail = await t.admin('GET', `/admin/audit/receiver-confirm/${one.id}`);
    assert.equal(detail.statusCode, 200);
    assert.equal(detail.json().data.validator_response.scripted, true);
    assert.equal(
      (await t.admin('GET', '/admin/audit/receiver-confirm/00000000-0000-4000-8000-000000000000')).statusCode,
      404,
    );
    assert.equal((await t.request({ method: 'GET', url: '/admin/audit/receiver-confirm' })).statusCode, 401);
    const forbidden = await t.request({
      method: 'GET',
      url: `/admin/audit/receiver-confirm/${one.id}`,
      headers: { ...ADMIN_HEADERS, 'x-actor-role': 'support' },
    });
    assert.equal(forbidden.statusCode, 403);
    assert.equal(forbidden.json().error.code, 'ADMIN_FORBIDDEN');
    assert.equal((await t.call('GET', '/admin/audit/receiver-confirm', receiver.live)).statusCode, 401);
  });

  it('the audit table is append-only in the database: UPDATE and DELETE fail', async () => {
    const [audit] = await t.db.selectFrom('receiver_confirm_audit').select('id').limit(1).execute();
    await assert.rejects(
      sql`update receiver_confirm_audit set outcome = 'verified' where id = ${audit!.id}`.execute(t.db),
      /append-only/,
    );
    await assert.rejects(sql`delete from receiver_confirm_audit where id = ${audit!.id}`.execute(t.db), /append-only/);
    assert.ok(
      await t.db.selectFrom('receiver_confirm_audit').select('id').where('id', '=', audit!.id).executeTakeFirst(),
    );
  });

  it('the ledger invariants hold after all of the above', async () => {
    const verification = await t.application.ledger.verify();
    assert.equal(verification.ok, true, verification.problems.join('; '));
  });
});
