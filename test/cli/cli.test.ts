import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { runMpay, runMpayProcess } from '../helpers/cli.ts';

/** Runs `mpay` against the test server (in this process; the first call and one usage error go through a real one). */
const mpay = (url: string, ...args: string[]) => runMpay(['--url', url, ...args]);

describe('mpay CLI over the admin routes', () => {
  let t: TestApp;
  let url: string;
  before(async () => {
    t = await startTestApp();
    url = await t.application.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => t.close());

  it('creates a merchant and prints its keys once (--json)', async () => {
    const result = await runMpayProcess(['--url', url, '--json', 'merchants', 'create', '--name', 'CLI Shop']);
    assert.equal(result.code, 0, result.stderr);
    const data = JSON.parse(result.stdout);
    assert.equal(data.merchant.name, 'CLI Shop');
    assert.match(data.api_keys.live, /^svc_live_/);
    const row = await t.db
      .selectFrom('merchants')
      .select('name')
      .where('id', '=', data.merchant.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.name, 'CLI Shop');

    const token = await mpay(url, 'merchants', 'token', data.merchant.id);
    assert.equal(token.code, 0, token.stderr);
    assert.match(token.stdout.trim(), /^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
  });

  it('adds a seller, and reports server errors with their code and a non-zero exit', async () => {
    const ok = await mpay(
      url,
      'sellers',
      'create',
      '--currency',
      'THB',
      '--method',
      'promptpay',
      '--name',
      'S',
      '--liquidity-minor',
      '100000',
      '--rate',
      '35.00',
      '--promptpay-id',
      '0812345678',
    );
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /seller [0-9a-f-]{36}: THB promptpay at 35.00/);
    const bad = await mpay(
      url,
      'sellers',
      'create',
      '--currency',
      'THB',
      '--method',
      'promptpay',
      '--name',
      'S',
      '--liquidity-minor',
      '100000',
      '--rate',
      '35.00',
    );
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /400 VALIDATION_ERROR promptpay sellers need promptpay_id/);
  });

  it('mints a sandbox JWT with a lifetime, and revokes every token of a merchant', async () => {
    const merchant = await t.createMerchant('CLI Revoke');
    const token = await mpay(url, '--json', 'merchants', 'token', merchant.id, '--mode', 'sandbox', '--ttl', '3600');
    assert.equal(token.code, 0, token.stderr);
    const minted = JSON.parse(token.stdout);
    assert.equal(minted.mode, 'sandbox');
    const me = (jwt: string) =>
      t.request({ method: 'GET', url: '/v1/merchants/me', headers: { authorization: `Bearer ${jwt}` } });
    assert.equal((await me(minted.jwt)).statusCode, 200);
    t.clock.advance(2000);
    const revoked = await mpay(url, 'merchants', 'revoke-tokens', merchant.id);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stdout, /revoked every JWT and dashboard session/);
    assert.equal((await me(minted.jwt)).statusCode, 401);
    assert.equal((await mpay(url, 'merchants', 'token', merchant.id, '--mode', 'test')).code, 2);
  });

  it('invites a dashboard user and prints the one-time link (mpay merchants add-user)', async () => {
    const created = JSON.parse((await mpay(url, '--json', 'merchants', 'create', '--name', 'Dashboard Shop')).stdout);
    const result = await mpay(
      url,
      'merchants',
      'add-user',
      created.merchant.id,
      '--email',
      'fin@cli.example',
      '--role',
      'finance',
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /dashboard user fin@cli\.example \(finance\) invited/);
    assert.match(result.stdout, /\/dashboard\/invite\/[0-9A-Za-z]{43}/);
    const duplicate = await mpay(
      url,
      'merchants',
      'add-user',
      created.merchant.id,
      '--email',
      'fin@cli.example',
      '--role',
      'viewer',
    );
    assert.equal(duplicate.code, 1);
    assert.match(duplicate.stderr, /409 MERCHANT_USER_EXISTS/);
    assert.equal((await mpay(url, 'merchants', 'add-user', created.merchant.id, '--email', 'x@cli.example')).code, 2);
  });

  it('usage errors exit 2', async () => {
    assert.equal((await mpay(url, 'merchants', 'create')).code, 2);
    assert.equal((await mpay(url, 'no-such-command')).code, 2);
    const process_run = await runMpayProcess(['--url', url, 'no-such-command']);
    assert.equal(process_run.code, 2);
    assert.match(process_run.stderr, /unknown command "no-such-command"/);
  });
});
