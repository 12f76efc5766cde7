import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';

/**
 * A process that serves no API (`ROLES=worker`) runs the jobs whose counters an operator alerts on: with METRICS_PORT
 * set it serves `GET /metrics` (under METRICS_TOKEN, as the API does) and `GET /healthz` there, and nothing else.
 */
describe('a worker process with METRICS_PORT', () => {
  const token = 'metrics-token-0123456789abcdef';
  let child: ChildProcess | undefined;
  let base = '';

  before(async () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ROLES: 'worker',
      DATA_DIR: 'memory://',
      METRICS_PORT: '0',
      METRICS_TOKEN: token,
      LOG_LEVEL: 'info',
    };
    delete env['DATABASE_URL'];
    child = spawn(process.execPath, ['src/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start within 60 s:\n${output}`)), 60_000);
      child!.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /"metrics":\{[^}]*"port":(\d+)[^}]*\}.*"msg":"mpay worker running"/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
      child!.on('exit', (code) => reject(new Error(`exited ${code}:\n${output}`)));
    });
    base = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });

  it("serves its jobs' metrics with the bearer token, and 401 without it", async () => {
    const refused = await fetch(`${base}/metrics`);
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('www-authenticate'), 'Bearer');
    assert.equal((await refused.json()).error.code, 'UNAUTHORIZED');
    const wrong = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer metrics-token-not-the-one' } });
    assert.equal(wrong.status, 401);

    const read = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(read.status, 200);
    assert.match(read.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await read.text();
    for (const name of [
      'mpay_matcher_mint_source_configured',
      'mpay_payment_completion_failures_total',
      'mpay_payment_legs_awaiting_payee',
      'process_cpu_seconds_total',
    ])
      assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), `${name} is served`);
  });

  it('answers /healthz, and nothing of the API', async () => {
    const health = await fetch(`${base}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: 'ok' });
    const api = await fetch(`${base}/v1/payments`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(api.status, 404);
    assert.equal((await api.json()).error.code, 'NOT_FOUND');
    const post = await fetch(`${base}/metrics`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
  });
});

describe('METRICS_PORT', () => {
  it('is a port number, unset by default', () => {
    assert.equal(loadConfig({}).metrics_port, undefined);
    assert.equal(loadConfig({ METRICS_PORT: '9464' }).metrics_port, 9464);
    assert.throws(() => loadConfig({ METRICS_PORT: 'metrics' }), /METRICS_PORT must be an integer/);
    assert.throws(() => loadConfig({ METRICS_PORT: '70000' }), /METRICS_PORT must be between 0 and 65535/);
  });
});
