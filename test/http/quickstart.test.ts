import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, statSync } from 'node:fs';
import { after, describe, it } from 'node:test';

/** The README's quickstart, end to end: `node src/main.ts` on an empty embedded store, then the printed key. */
describe('first start on an empty store', () => {
  let child: ChildProcess | undefined;
  after(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });

  it('writes the tokens and a demo merchant to an owner-only file; the live key creates and reads a payment', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: 'memory://', PORT: '0', LOG_LEVEL: 'info' };
    delete env['DATABASE_URL'];
    delete env['ADMIN_SERVICE_TOKEN'];
    delete env['INTERNAL_SERVICE_TOKEN'];
    child = spawn(process.execPath, ['src/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const address = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start within 60 s:\n${output}`)), 60_000);
      child!.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /"address":"(http:\/\/[^"]+)".*"msg":"mpay listening"/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
      child!.on('exit', (code) => reject(new Error(`exited ${code}:\n${output}`)));
    });

    // stdout is a pipe, not a terminal: the credentials are in an owner-only file whose path is printed.
    assert.doesNotMatch(output, /svc_live_|ADMIN_SERVICE_TOKEN=/);
    const path = /live credentials written to (\S+first-start-credentials\.txt)/.exec(output)?.[1];
    assert.ok(path, `credentials file path printed:\n${output}`);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    output = readFileSync(path, 'utf8');
    const admin_token = /ADMIN_SERVICE_TOKEN=(adm_\w+)/.exec(output)?.[1];
    const live_key = /live key:\s+(svc_live_\w+)/.exec(output)?.[1];
    assert.ok(admin_token, 'admin token printed');
    assert.ok(/INTERNAL_SERVICE_TOKEN=int_\w+/.test(output), 'internal token printed');
    assert.ok(live_key, 'live key printed');
    assert.match(output, /test key:\s+svc_test_\w+/);
    assert.match(output, /sandbox key:\s+svc_sandbox_\w+/);
    assert.match(output, /merchant JWT:\s+eyJ/);
    assert.match(output, /webhook secret:\s+whsec_/);

    const created = await fetch(`${address}/v1/trades`, {
      method: 'POST',
      headers: { 'x-api-key': live_key, 'content-type': 'application/json' },
      body: JSON.stringify({
        order_id: 'order-1001',
        amount: '250.00',
        currency: 'THB',
        return_url: 'https://shop.example/return',
      }),
    });
    assert.equal(created.status, 201);
    const payment = (await created.json()).data;
    assert.equal(payment.amount, 25_000);
    assert.equal(payment.status, 'matched');

    const read = await fetch(`${address}/v1/payments/${payment.id}`, {
      headers: { authorization: `Bearer ${live_key}` },
    });
    assert.equal(read.status, 200);
    assert.equal((await read.json()).data.id, payment.id);

    const admin = await fetch(`${address}/admin/merchants`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${admin_token}`,
        'x-actor-user-id': 'ops',
        'x-actor-role': 'super_admin',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'Second' }),
    });
    assert.equal(admin.status, 201, 'the printed admin token works');
  });
});
