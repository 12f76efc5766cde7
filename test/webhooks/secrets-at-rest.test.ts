import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { migrateTo, migrateToLatest } from '../../src/db/migrate.ts';
import { dispatchDueWebhooks } from '../../src/modules/webhooks/dispatcher.ts';
import { setDefaultEndpoint } from '../../src/modules/webhooks/default-endpoint.ts';
import {
  KEY_FILE_NAME,
  parseSecretsKey,
  resolveWebhookSecretsKey,
  SecretBox,
} from '../../src/modules/webhooks/secret-box.ts';
import { verifyWebhook } from '../../clients/typescript/src/webhooks.js';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { openTestDatabase } from '../helpers/database.ts';
import { startReceiver, type Receiver } from './receiver.ts';

describe('webhook secrets encrypted at rest', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t.close();
  });

  it("no secret is readable in the database: endpoints and the merchant's issued secret are AES-256-GCM sealed", async () => {
    const merchant = await t.createMerchant('Sealed');
    const waiting = await t.db
      .selectFrom('merchants')
      .select('webhook_secret')
      .where('id', '=', merchant.id)
      .executeTakeFirstOrThrow();
    assert.ok(waiting.webhook_secret?.startsWith('v1.'));
    assert.ok(!waiting.webhook_secret!.includes(merchant.webhook_secret.slice(6)));
    const created = (
      await t.call('POST', '/v1/webhook-endpoints', merchant.sandbox, { url: 'http://127.0.0.1:9/x' })
    ).json().data;
    const put = (
      await t.call('PUT', '/v1/webhook-endpoint', merchant.live, { url: 'https://93.184.215.14/hook' })
    ).json().data;
    const rotated = (await t.call('POST', `/v1/webhook-endpoints/${created.id}/rotate-secret`, merchant.sandbox)).json()
      .data;
    const dump =
      JSON.stringify(await t.db.selectFrom('webhook_endpoints').selectAll().execute()) +
      JSON.stringify(await t.db.selectFrom('merchants').selectAll().execute());
    for (const secret of [merchant.webhook_secret, created.secret, put.secret, rotated.secret]) {
      assert.ok(!dump.includes(secret), 'no plaintext secret in the dump');
      assert.ok(!dump.includes(secret.slice('whsec_'.length)), 'nor its key part');
    }
    const row = await t.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    const box = t.application.webhooks.deps.box;
    assert.equal(box.open(row.secret_sealed, row.id), rotated.secret);
    assert.equal(box.open(row.previous_secret_sealed!, row.id), created.secret);
    // Another key, or the sealed value moved to another row, does not open.
    assert.throws(() => new SecretBox(randomBytes(32)).open(row.secret_sealed, row.id));
    assert.throws(() => box.open(row.secret_sealed, randomUUID()));
  });

  it('key sources: WEBHOOK_SECRETS_KEY (hex or base64), a 0600 file in DATA_DIR on the embedded default, the settings table for memory://', async () => {
    const raw = randomBytes(32);
    assert.deepEqual(parseSecretsKey(raw.toString('hex')), raw);
    assert.deepEqual(parseSecretsKey(raw.toString('base64')), raw);
    assert.throws(() => parseSecretsKey('too-short'), /WEBHOOK_SECRETS_KEY must be 32 bytes/);
    assert.throws(
      () => loadConfig({ WEBHOOK_SECRETS_KEY: 'short' }),
      (error: Error) => error instanceof ConfigError && /WEBHOOK_SECRETS_KEY/.test(error.message),
    );
    assert.throws(() => loadConfig({ WEBHOOK_SECRETS_KEY: randomBytes(16).toString('base64') }), ConfigError);
    assert.equal(loadConfig({ WEBHOOK_SECRETS_KEY: raw.toString('hex') }).webhook_secrets_key, raw.toString('hex'));
    assert.throws(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'maybe' }), /WEBHOOK_ALLOW_PRIVATE_TARGETS/);
    assert.deepEqual(
      await resolveWebhookSecretsKey(t.db, {
        webhook_secrets_key: raw.toString('base64'),
        database_url: undefined,
        data_dir: 'memory://',
      }),
      raw,
    );

    const dir = mkdtempSync(join(tmpdir(), 'mpay-keys-'));
    try {
      const first = await resolveWebhookSecretsKey(t.db, {
        webhook_secrets_key: undefined,
        database_url: undefined,
        data_dir: dir,
      });
      const path = join(dir, KEY_FILE_NAME);
      assert.equal(statSync(path).mode & 0o777, 0o600);
      assert.deepEqual(parseSecretsKey(readFileSync(path, 'utf8')), first);
      assert.deepEqual(
        await resolveWebhookSecretsKey(t.db, {
          webhook_secrets_key: undefined,
          database_url: undefined,
          data_dir: dir,
        }),
        first,
        'generated once',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const kept = await resolveWebhookSecretsKey(t.db, {
      webhook_secrets_key: undefined,
      database_url: undefined,
      data_dir: 'memory://',
    });
    assert.deepEqual(
      await resolveWebhookSecretsKey(t.db, {
        webhook_secrets_key: undefined,
        database_url: undefined,
        data_dir: 'memory://',
      }),
      kept,
    );
  });
});

describe('migration 0100: the single merchant endpoint becomes a live default endpoint', () => {
  let t: TestApp;
  let receiver: Receiver;
  after(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('keeps pending live deliveries (signed with the same secret), skips sandbox ones, and seals the secrets on start', async () => {
    receiver = await startReceiver();
    const database = await openTestDatabase({ migrate: false });
    await migrateTo(database.db, '0061_fx');
    const with_url = randomUUID();
    const without_url = randomUUID();
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const issued = `whsec_${randomBytes(24).toString('base64')}`;
    const at = new Date('2026-01-01T00:00:00Z');
    await sql`insert into merchants (id, name, webhook_url, webhook_secret, created_at) values (${with_url}, 'Old', ${receiver.url}, ${secret}, ${at}), (${without_url}, 'No URL', null, ${issued}, ${at})`.execute(
      database.db,
    );
    const event = (id: string, merchant_id: string, is_sandbox: boolean, resource_id: string) =>
      sql`insert into events (id, merchant_id, is_sandbox, type, resource_type, resource_id, payload, created_at)
          values (${id}, ${merchant_id}, ${is_sandbox}, 'payment.matched', 'payment', ${resource_id}, ${JSON.stringify({ id, type: 'payment.matched', event: 'payment.matched' })}::jsonb, ${at})`.execute(
        database.db,
      );
    await event('evt_live_1', with_url, false, 'p1');
    await event('evt_live_2', with_url, false, 'p2');
    await event('evt_sandbox_1', with_url, true, 'p3');
    // the delivery rows the outbox had then: one per event (the delivery trigger is applied after the migrations)
    await sql`insert into webhook_deliveries (id, event_id, event_seq, merchant_id, is_sandbox, resource_id, ordering_key, status, next_attempt_at, created_at)
              select gen_random_uuid(), id, seq, merchant_id, is_sandbox, resource_id, resource_id, 'pending', created_at, created_at from events`.execute(
      database.db,
    );
    await sql`update webhook_deliveries set status = 'succeeded' where event_id = 'evt_live_2'`.execute(database.db);
    await migrateToLatest(database.db);

    t = await startTestApp({ database });
    const endpoints = await t.db.selectFrom('webhook_endpoints').selectAll().execute();
    assert.equal(endpoints.length, 1);
    const [endpoint] = endpoints;
    assert.equal(endpoint!.merchant_id, with_url);
    assert.equal(endpoint!.is_sandbox, false);
    assert.equal(endpoint!.is_default, true);
    assert.equal(endpoint!.url, receiver.url);
    assert.deepEqual(endpoint!.enabled_events, ['*']);
    assert.ok(endpoint!.secret_sealed.startsWith('v1.'), 'sealed on start');
    const merchants = await t.db.selectFrom('merchants').selectAll().orderBy('name').execute();
    assert.deepEqual(
      merchants.map((row) => [row.name, row.webhook_url, row.webhook_secret?.startsWith('v1.') ?? null]),
      [
        ['No URL', null, true],
        ['Old', null, null],
      ],
    );
    const deliveries = await t.db.selectFrom('webhook_deliveries').selectAll().orderBy('event_id').execute();
    assert.deepEqual(
      deliveries.map((row) => [row.event_id, row.status, row.endpoint_id]),
      [
        ['evt_live_1', 'pending', endpoint!.id],
        ['evt_live_2', 'succeeded', endpoint!.id],
        ['evt_sandbox_1', 'skipped', null],
      ],
    );

    assert.equal(await dispatchDueWebhooks({ ...t.application.webhooks.dispatch, timeout_ms: 2000 }), 1);
    const [hook] = receiver.received;
    assert.equal(hook!.headers['webhook-id'], 'evt_live_1');
    verifyWebhook(hook!.raw, hook!.headers, secret, {
      now: new Date(Number(hook!.headers['webhook-timestamp']) * 1000),
    });
    // The merchant created without a URL keeps its issued secret for its first live default endpoint.
    const set = await setDefaultEndpoint(
      t.application.webhooks.deps,
      { merchant_id: without_url, is_sandbox: false },
      'https://93.184.215.14/x',
    );
    assert.equal(set.secret, issued);
  });
});
