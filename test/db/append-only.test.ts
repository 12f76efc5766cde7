import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { createApplication, type Application } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { APPEND_ONLY_TABLES } from '../../src/db/append-only.ts';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { grantServiceRole } from '../../src/db/roles.ts';
import { ADMIN_HEADERS, ADMIN_TOKEN, INTERNAL_TOKEN, thbSeller } from '../helpers/app.ts';
import { openTestDatabase } from '../helpers/database.ts';
import { archiveOldAuditRows } from '../../src/modules/archival/service.ts';
import { PNG_BASE64 } from '../helpers/pending-funds.ts';

const ON_POSTGRES = Boolean(process.env['DATABASE_URL']);
const POSTGRES_ONLY = ON_POSTGRES
  ? false
  : 'PostgreSQL only (set DATABASE_URL): PGlite has a single user and no roles to restrict';

/** History nobody can rewrite, not even the service. */
describe('append-only history', () => {
  let owner: DatabaseHandle & { url?: string };
  let tables: string[];

  before(async () => {
    owner = await openTestDatabase();
    tables = (
      await sql<{ table_name: string }>`select table_name from append_only_tables order by table_name`.execute(owner.db)
    ).rows.map((row) => row.table_name);
  });
  after(() => owner.close());

  it('lists every append-only table in the registry', () => {
    for (const table of APPEND_ONLY_TABLES) assert.ok(tables.includes(table), `${table} is not guarded`);
    assert.ok(tables.includes('append_only_tables'));
  });

  it('refuses UPDATE, DELETE and TRUNCATE on each of them by trigger, even as the owner and even on zero rows', async () => {
    for (const table of tables) {
      const id = sql.id(table);
      const column = sql.id(table === 'append_only_tables' ? 'table_name' : 'id');
      await assert.rejects(
        sql`update ${id} set ${column} = ${column}`.execute(owner.db),
        /append-only: UPDATE refused/,
        `${table} UPDATE`,
      );
      await assert.rejects(sql`delete from ${id}`.execute(owner.db), /append-only: DELETE refused/, `${table} DELETE`);
      // CASCADE: a table other tables reference would otherwise be refused by its foreign keys before any trigger ran.
      await assert.rejects(
        sql`truncate ${id} cascade`.execute(owner.db),
        /append-only: TRUNCATE refused/,
        `${table} TRUNCATE`,
      );
    }
  });

  it('lets a later table join with one call', async () => {
    await sql`create table later_log (id int primary key)`.execute(owner.db);
    await sql`select mpay_append_only('later_log')`.execute(owner.db);
    await sql`insert into later_log values (1)`.execute(owner.db);
    await assert.rejects(sql`delete from later_log`.execute(owner.db), /append-only/);
    await assert.rejects(sql`select mpay_append_only('no_such_table')`.execute(owner.db), /no table/);
  });

  describe('the service runs as a least-privilege role', { skip: POSTGRES_ONLY }, () => {
    const role = `mpay_svc_${randomBytes(4).toString('hex')}`;
    let service: DatabaseHandle;
    let as_service: Kysely<unknown>;
    let application: Application;

    before(async () => {
      const server = new pg.Client({ connectionString: process.env['DATABASE_URL'] });
      await server.connect();
      await server.query(`create role ${role} login`);
      await server.end();
      const report = await grantServiceRole(owner.db, role);
      assert.ok(report.append_only.includes('ledger_transfers'));
      const url = new URL(owner.url!);
      url.username = role;
      url.password = '';
      service = await openDatabase({ database_url: url.toString(), data_dir: '' });
      as_service = service.db as unknown as Kysely<unknown>;
      const config = loadConfig({
        LOG_LEVEL: 'silent',
        ADMIN_SERVICE_TOKEN: ADMIN_TOKEN,
        INTERNAL_SERVICE_TOKEN: INTERNAL_TOKEN,
        DATABASE_URL: url.toString(),
        PUBLIC_BASE_URL: 'http://gateway.test',
      });
      application = await createApplication({ config, database: service });
      await application.app.ready();
    });
    after(async () => {
      await application?.close();
      await service?.close();
      await owner.close();
      const server = new pg.Client({ connectionString: process.env['DATABASE_URL'] });
      await server.connect();
      await server.query(`drop role if exists ${role}`);
      await server.end();
    });

    it('has no UPDATE, DELETE or TRUNCATE on any append-only table', async () => {
      for (const table of tables) {
        const id = sql.id(table);
        await assert.rejects(
          sql`update ${id} set ${sql.id(table === 'append_only_tables' ? 'table_name' : 'id')} = null where false`.execute(
            as_service,
          ),
          /permission denied/,
          `${table} UPDATE`,
        );
        await assert.rejects(
          sql`delete from ${id} where false`.execute(as_service),
          /permission denied/,
          `${table} DELETE`,
        );
        await assert.rejects(sql`truncate ${id}`.execute(as_service), /permission denied/, `${table} TRUNCATE`);
      }
    });

    it('cannot drop or disable the triggers, nor change the list', async () => {
      await assert.rejects(
        sql`drop trigger ledger_transfers_append_only_guard on ledger_transfers`.execute(as_service),
        /must be owner|permission denied/,
      );
      await assert.rejects(
        sql`alter table ledger_transfers disable trigger all`.execute(as_service),
        /must be owner|permission denied/,
      );
      await assert.rejects(
        sql`insert into append_only_tables (table_name) values ('x')`.execute(as_service),
        /permission denied/,
      );
      await assert.rejects(sql`create table sneaky (id int)`.execute(as_service), /permission denied/);
    });

    it('still runs the service: merchants, sellers, payments, checkout, ledger adjustments', async () => {
      const admin = (method: 'POST' | 'GET', url: string, payload?: object) =>
        application.app.inject({ method, url, headers: ADMIN_HEADERS, ...(payload ? { payload } : {}) });
      const merchant = await admin('POST', '/admin/merchants', { name: 'Least Privilege' });
      assert.equal(merchant.statusCode, 201, merchant.body);
      const seller = await admin('POST', '/admin/sellers', thbSeller());
      assert.equal(seller.statusCode, 201, seller.body);
      const live = merchant.json().data.api_keys.live as string;
      const trade = await application.app.inject({
        method: 'POST',
        url: '/v1/trades',
        headers: { 'x-api-key': live },
        payload: { order_id: 'lp-1', amount: '100.00', currency: 'THB', return_url: 'https://shop.example/r' },
      });
      assert.equal(trade.statusCode, 201, trade.body);
      // Opening the checkout updates the payment (matched -> payment_pending) and appends its event.
      const page = await application.app.inject({ method: 'GET', url: `/checkout/${trade.json().data.id}` });
      assert.equal(page.statusCode, 200);
      const read = await application.app.inject({
        method: 'GET',
        url: `/v1/payments/${trade.json().data.id}`,
        headers: { 'x-api-key': live },
      });
      assert.equal(read.json().data.status, 'payment_pending');
      const adjustment = await admin(
        'POST',
        `/admin/merchants/${merchant.json().data.merchant.id}/ledger-adjustments`,
        { amount_micro_pay: 1_000_000, direction: 'credit', reason: 'test' },
      );
      assert.equal(adjustment.statusCode, 201, adjustment.body);
    });

    it('archives audit rows older than 90 days through the privileged function, removing nothing', async () => {
      const merchant = await application.app.inject({
        method: 'POST',
        url: '/admin/merchants',
        headers: ADMIN_HEADERS,
        payload: { name: 'Archive LP' },
      });
      const created = await application.app.inject({
        method: 'POST',
        url: '/internal/pending-funds',
        headers: { authorization: `Bearer ${INTERNAL_TOKEN}` },
        payload: {
          receiver_merchant_id: merchant.json().data.merchant.id,
          amount_minor: 1_000,
          payer_reference: 'lp',
          receipt_base64: PNG_BASE64,
          content_type: 'image/png',
        },
      });
      assert.equal(created.statusCode, 201, created.body);
      const id = created.json().data.id as string;
      const audit = (table: string) =>
        sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where pending_funds_id = ${id}`
          .execute(as_service)
          .then((r) => r.rows[0]!.n);
      assert.equal(await audit('receiver_confirm_audit'), 1);
      await assert.rejects(
        sql`delete from receiver_confirm_audit where pending_funds_id = ${id}`.execute(as_service),
        /permission denied/,
      );
      // The trigger's setting opens nothing without the privilege.
      await assert.rejects(
        as_service.transaction().execute(async (trx) => {
          await sql`select set_config('mpay.archive_move', 'receiver_confirm_audit', true)`.execute(trx);
          await sql`delete from receiver_confirm_audit where pending_funds_id = ${id}`.execute(trx);
        }),
        /permission denied/,
      );
      const admin_rows = (await sql<{ n: number }>`select count(*)::int as n from admin_audit_log`.execute(as_service))
        .rows[0]!.n;
      assert.ok(admin_rows >= 1, 'the ledger adjustment above is audited');
      // The worker's job, as the service role, 91 days on.
      const moved = await archiveOldAuditRows({
        db: service.db,
        clock: { now: () => new Date(Date.now() + 91 * 24 * 3600_000) },
      });
      assert.ok(moved >= 1 + admin_rows, `moved ${moved}`);
      // copied, nothing removed
      assert.equal(await audit('receiver_confirm_audit'), 1);
      assert.equal(await audit('receiver_confirm_audit_archive'), 1);
      assert.equal(
        (await sql<{ n: number }>`select count(*)::int as n from admin_audit_log`.execute(as_service)).rows[0]!.n,
        admin_rows,
      );
      await assert.rejects(sql`delete from receiver_confirm_audit_archive`.execute(as_service), /permission denied/);
      const read = await application.app.inject({
        method: 'GET',
        url: `/admin/audit/receiver-confirm?pending_funds_id=${id}&stage=all&include_archived=true`,
        headers: ADMIN_HEADERS,
      });
      assert.equal(read.json().data.length, 1);
    });
  });
});
