import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ARCHIVE_AFTER_DAYS, archiveBatch, archiveOldAuditRows } from '../../src/modules/archival/service.ts';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { completedPayments } from '../helpers/payments.ts';
import { createPendingFunds, receipt } from '../helpers/pending-funds.ts';

const DAY = 24 * 3600_000;

/**
 * Contract section 8: audit rows older than 90 days move to archive tables that stay append-only and readable by the
 * admin routes on request. The move goes through the privileged database function; the audit tables keep refusing
 * DELETE everywhere else. Driven by a fake clock.
 */
describe('90-day archival of the audit tables', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let batch_id: string;
  const old_pending: string[] = [];
  let new_pending: string;
  let old_receiver_rows: Record<string, unknown>[];
  const archive = (batch?: number) => archiveOldAuditRows({ db: t.db, clock: t.clock }, batch);
  const count = async (table: string) =>
    Number((await sql<{ n: string }>`select count(*)::text as n from ${sql.table(table)}`.execute(t.db)).rows[0]!.n);

  async function pendingWithConfirm(): Promise<string> {
    const created = await createPendingFunds(t, merchant.id);
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().data.id as string;
    const confirmed = await t.call('POST', `/v1/pending-funds/${id}/receiver-confirm`, merchant.live, receipt());
    assert.equal(confirmed.statusCode, 201, confirmed.body);
    return id;
  }

  before(async () => {
    t = await startTestApp();
    merchant = await t.createMerchant('Archived');
    await t.createSeller(thbSeller());
    // Day 0: three pending-funds rows (an intake and a receiver-confirm audit row each) and two audited operator
    // actions on a settlement batch.
    for (let i = 0; i < 3; i++) {
      old_pending.push(await pendingWithConfirm());
      t.clock.advance(1000);
    }
    await completedPayments(t, merchant.live, [{ order_id: 'old-1', amount: 10000 }]);
    batch_id = (await t.admin('POST', '/admin/settlements/run')).json().data.batches[0].id;
    assert.equal(
      (await t.admin('POST', `/admin/settlements/${batch_id}/fail`, { reason: 'returned' })).statusCode,
      200,
    );
    t.clock.advance(1000);
    assert.equal((await t.admin('POST', `/admin/settlements/${batch_id}/retry`)).statusCode, 200);
    old_receiver_rows = (await t.db.selectFrom('receiver_confirm_audit').selectAll().execute()) as unknown as Record<
      string,
      unknown
    >[];
    assert.equal(old_receiver_rows.length, 6);
    // Day 60: newer rows that must stay.
    t.clock.advance(60 * DAY);
    new_pending = await pendingWithConfirm();
    assert.equal(
      (await t.admin('POST', `/admin/settlements/${batch_id}/fail`, { reason: 'returned again' })).statusCode,
      200,
    );
  });
  after(() => t.close());

  it('moves nothing younger than 90 days, then exactly the rows past it, in batches, and a second pass moves nothing', async () => {
    const admin_rows_before = await count('admin_audit_log');
    const old_admin = await t.db
      .selectFrom('admin_audit_log')
      .selectAll()
      .where('created_at', '<', new Date(t.clock.now().getTime() - 30 * DAY))
      .execute();
    assert.ok(old_admin.length >= 2, 'the fail and the retry are audited');
    // Day 90 after the last old row: not yet older than 90 days.
    const last_old = Math.max(
      ...old_receiver_rows.map((row) => (row['created_at'] as Date).getTime()),
      ...old_admin.map((row) => row.created_at.getTime()),
    );
    t.clock.set(new Date(last_old + ARCHIVE_AFTER_DAYS * DAY));
    const first_old = Math.min(...old_receiver_rows.map((row) => (row['created_at'] as Date).getTime()));
    assert.ok(first_old < last_old);
    // A batch of 2 takes the oldest two only.
    assert.equal(await archiveBatch(t.db, 'receiver_confirm_audit', t.clock.now(), 2), 2);
    assert.equal(await count('receiver_confirm_audit_archive'), 2);
    t.clock.set(new Date(last_old + ARCHIVE_AFTER_DAYS * DAY + 1));
    const moved = await archive(2);
    assert.equal(moved, 4 + old_admin.length);
    // nothing is removed from the database: every row stays in its table, the archived ones copied beside it
    assert.equal(await count('receiver_confirm_audit'), 8);
    assert.equal(await count('receiver_confirm_audit_archive'), 6, 'the day-60 rows are not archived');
    assert.equal(await count('admin_audit_log'), admin_rows_before);
    assert.equal(await count('admin_audit_log_archive'), old_admin.length);
    // Idempotent.
    assert.equal(await archive(2), 0);
    assert.equal(await count('receiver_confirm_audit_archive'), 6);
    // Rows arrive unchanged, with archived_at.
    const archived = await t.db.selectFrom('receiver_confirm_audit_archive').selectAll().execute();
    for (const original of old_receiver_rows) {
      const copy = archived.find((row) => row.id === original['id']) as unknown as Record<string, unknown>;
      assert.ok(copy, `row ${String(original['id'])} archived`);
      const { archived_at, ...rest } = copy;
      assert.deepEqual(rest, original);
      assert.ok(archived_at instanceof Date);
    }
    const admin_archived = await t.db.selectFrom('admin_audit_log_archive').selectAll().orderBy('created_at').execute();
    assert.deepEqual(
      admin_archived.map(({ archived_at: _, ...rest }) => rest).sort((a, b) => a.id.localeCompare(b.id)),
      [...old_admin].sort((a, b) => a.id.localeCompare(b.id)),
    );
    assert.ok(admin_archived.every((row) => row.archived_at.getTime() === t.clock.now().getTime()));
  });

  it('the admin routes read archived rows on request (include_archived=true), paging across both tables', async () => {
    const old_id = old_pending[0]!;
    const list = async (query: string) => (await t.admin('GET', `/admin/audit/receiver-confirm?${query}`)).json();
    assert.equal((await list(`pending_funds_id=${old_id}&stage=all`)).data.length, 0);
    const with_archive = (await list(`pending_funds_id=${old_id}&stage=all&include_archived=true`)).data as {
      id: string;
      stage: string;
      archived_at: string | null;
    }[];
    assert.deepEqual(with_archive.map((row) => row.stage).sort(), ['intake', 'receiver_confirm']);
    assert.ok(with_archive.every((row) => row.archived_at !== null));
    assert.ok(
      (await list(`pending_funds_id=${new_pending}&stage=all`)).data.every(
        (row: { archived_at: string | null }) => row.archived_at === null,
      ),
    );
    // Default stage (receiver_confirm) through the archive too: one row per receiver-confirm call.
    assert.equal((await list(`pending_funds_id=${old_id}&include_archived=true`)).data.length, 1);
    // Pages of 3 across live and archived rows: all 8, newest first, none twice.
    const seen: { id: string; created_at: string }[] = [];
    let cursor: string | null = null;
    do {
      const page: { data: { id: string; created_at: string }[]; next_cursor: string | null } = await list(
        `stage=all&include_archived=true&limit=3${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...page.data);
      cursor = page.next_cursor;
    } while (cursor);
    assert.equal(seen.length, 8);
    assert.equal(new Set(seen.map((row) => row.id)).size, 8);
    const order = seen.map((row) => `${row.created_at}|${row.id}`);
    assert.deepEqual(order, [...order].sort().reverse());

    const archived_id = with_archive[0]!.id;
    // a read by id finds an archived row, marked archived
    const by_id = await t.admin('GET', `/admin/audit/receiver-confirm/${archived_id}`);
    assert.equal(by_id.statusCode, 200, by_id.body);
    assert.deepEqual([by_id.json().data.archived, by_id.json().data.archived_at], [true, with_archive[0]!.archived_at]);
    const shown = await t.admin('GET', `/admin/audit/receiver-confirm/${archived_id}?include_archived=true`);
    assert.equal(shown.statusCode, 200, shown.body);
    assert.equal(shown.json().data.archived_at, with_archive[0]!.archived_at);
    assert.ok(shown.json().data.validator_response);
    assert.equal((await t.admin('GET', `/admin/audit/receiver-confirm?include_archived=maybe`)).statusCode, 400);

    const log = async (query: string) =>
      (await t.admin('GET', `/admin/settlements/${batch_id}/audit-log?${query}`)).json().data as {
        action: string;
        archived_at: string | null;
      }[];
    const live = await log('limit=100');
    const all = await log('limit=100&include_archived=true');
    assert.ok(live.every((entry) => entry.archived_at === null));
    assert.ok(all.length > live.length);
    assert.ok(all.some((entry) => entry.action.includes('retry') && entry.archived_at !== null));
  });

  it('the archives stay append-only and the audit tables refuse DELETE always, whatever the session says', async () => {
    for (const table of ['receiver_confirm_audit_archive', 'admin_audit_log_archive']) {
      await assert.rejects(sql`delete from ${sql.table(table)}`.execute(t.db), /append-only: DELETE refused/);
      await assert.rejects(sql`update ${sql.table(table)} set id = id`.execute(t.db), /append-only: UPDATE refused/);
      await assert.rejects(sql`truncate ${sql.table(table)}`.execute(t.db), /append-only: TRUNCATE refused/);
    }
    await assert.rejects(sql`delete from receiver_confirm_audit`.execute(t.db), /append-only/);
    await assert.rejects(sql`delete from admin_audit_log`.execute(t.db), /append-only/);
    // No setting opens a DELETE any more, not even the one archival once used.
    for (const table of ['receiver_confirm_audit', 'admin_audit_log']) {
      await assert.rejects(
        t.db.transaction().execute(async (trx) => {
          await sql`select set_config('mpay.archive_move', ${table}, true)`.execute(trx);
          await sql`delete from ${sql.table(table)}`.execute(trx);
        }),
        /append-only/,
      );
    }
    await assert.rejects(
      t.db.transaction().execute(async (trx) => {
        await sql`select set_config('mpay.archive_move', 'receiver_confirm_audit', true)`.execute(trx);
        await sql`update receiver_confirm_audit set id = id`.execute(trx);
      }),
      /append-only/,
    );
    await assert.rejects(sql`select mpay_archive_move('events', now(), 10)`.execute(t.db), /not archived/);
    await assert.rejects(sql`select mpay_archive_move('receiver_confirm_audit', now(), 0)`.execute(t.db), /batch_size/);
    assert.equal(await count('receiver_confirm_audit'), 8);
  });

  it('is a scheduled worker job', async () => {
    // The job runs through the scheduler like the others: wake it and wait for its pass.
    t.clock.advance(ARCHIVE_AFTER_DAYS * DAY);
    t.application.scheduler.start();
    try {
      for (let i = 0; i < 100 && (await count('receiver_confirm_audit_archive')) < 8; i++)
        await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      await t.application.scheduler.stop();
    }
    assert.equal(await count('receiver_confirm_audit'), 8, 'nothing removed');
    assert.equal(await count('receiver_confirm_audit_archive'), 8);
  });
});
