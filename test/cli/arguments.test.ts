import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { splitGlobalOptions } from '../../src/cli/main.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { runMpay, runMpayProcess, type CliResult } from '../helpers/cli.ts';

const STACK_LINE = /^\s+at .+\(?.+:\d+:\d+\)?$/m;

function assertUsageError(result: CliResult, message: RegExp): void {
  assert.equal(result.code, 2, `${result.stdout}${result.stderr}`);
  assert.match(result.stderr, message);
  assert.doesNotMatch(result.stderr, STACK_LINE, 'a usage error shows no stack trace');
  assert.equal(result.stdout, '');
}

describe('mpay reads its options wherever they stand and answers usage errors with a message and exit 2', () => {
  let t: TestApp;
  let url: string;
  let merchant: TestMerchant;
  before(async () => {
    t = await startTestApp();
    url = await t.application.app.listen({ port: 0, host: '127.0.0.1' });
    merchant = await t.createMerchant('Argument Shop');
  });
  after(() => t.close());

  it('splits the global options from the command in any position, and stops at --', () => {
    assert.deepEqual(splitGlobalOptions(['listen', '--api-key', 'k', '--forward-to', 'http://x/', '--json']), {
      globals: ['--api-key=k', '--json'],
      command: ['listen', '--forward-to', 'http://x/'],
    });
    assert.deepEqual(splitGlobalOptions(['--url=http://h', 'sandbox', 'trigger', 'expired', '--', '--json']), {
      globals: ['--url=http://h'],
      command: ['sandbox', 'trigger', 'expired', '--', '--json'],
    });
  });

  it('takes --url, --api-key and --json after the command and among its arguments', async () => {
    const after_command = await runMpay([
      'sandbox',
      'trigger',
      'matched_then_completed',
      '--api-key',
      merchant.sandbox,
      '--url',
      url,
      '--json',
    ]);
    assert.equal(after_command.code, 0, after_command.stderr);
    assert.equal(JSON.parse(after_command.stdout).payment.status, 'completed');
    const among = await runMpay([
      'sandbox',
      '--json',
      'trigger',
      '--url',
      url,
      'expired',
      '--amount',
      '5000',
      '--api-key',
      merchant.test,
    ]);
    assert.equal(among.code, 0, among.stderr);
    assert.deepEqual(
      [JSON.parse(among.stdout).payment.status, JSON.parse(among.stdout).payment.amount],
      ['expired', 5000],
    );
    const admin = await runMpay(
      ['merchants', 'create', '--name', 'Trailing Options', `--url=${url}`, '--admin-token', ADMIN_TOKEN, '--json'],
      { ADMIN_SERVICE_TOKEN: undefined },
    );
    assert.equal(admin.code, 0, admin.stderr);
    assert.equal(JSON.parse(admin.stdout).merchant.name, 'Trailing Options');
  });

  it('mpay listen --api-key KEY (the key after the command) receives the sandbox stream and stops on Ctrl-C', async () => {
    const main = resolve(import.meta.dirname, '../../src/cli/main.ts');
    const child = spawn(
      process.execPath,
      [main, 'listen', '--api-key', merchant.sandbox, '--url', url, '--events', 'payment.completed'],
      {
        env: { ...process.env, MPAY_API_KEY: '', ADMIN_SERVICE_TOKEN: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.on('close', done));
    const seen = (pattern: RegExp) =>
      new Promise<void>((found, fail) => {
        const check = () => (pattern.test(stdout) ? found() : undefined);
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          check();
        });
        check();
        void exited.then((code) => fail(new Error(`listen exited ${code} before ${pattern}: ${stdout}${stderr}`)));
      });
    await seen(/Ready/);
    const simulated = await t.call('POST', '/v1/sandbox/payments/simulate', merchant.sandbox, {
      scenario: 'matched_then_completed',
    });
    assert.equal(simulated.statusCode, 201, simulated.body);
    await seen(/<-- payment\.completed/);
    child.kill('SIGINT');
    assert.equal(await exited, 0, stderr);
    assert.doesNotMatch(stderr, STACK_LINE);
  });

  it('answers an unknown option, a missing value or a stray argument with the reason, the help to read and exit 2', async () => {
    assertUsageError(
      await runMpay(['listen', '--api-key', merchant.sandbox, '--bogus']),
      /^mpay listen: Unknown option '--bogus'.*\nSee `mpay help listen` for the usage\.\n$/s,
    );
    assertUsageError(
      await runMpay(['sandbox', 'trigger', 'expired', '--amount']),
      /^mpay sandbox: Option '--amount <value>' argument missing/,
    );
    assertUsageError(await runMpay(['settlements', 'run', '--url']), /^mpay: --url needs a value\n$/);
    assertUsageError(
      await runMpay(['sandbox', 'trigger', '--url', url, '--', '--json']),
      /^mpay sandbox: unknown scenario or event type "--json"/,
    );
    // The real process boundary: the same message and exit code, and still no stack.
    const process_run = await runMpayProcess(['listen', '--url', url, '--api-key', merchant.sandbox, '--events']);
    assertUsageError(process_run, /^mpay listen: Option '--events <value>' argument missing/);
    const unknown_global = await runMpayProcess(['--no-such-flag', 'listen']);
    assertUsageError(unknown_global, /^mpay listen: Unknown option '--no-such-flag'/);
  });

  it('says what failed, without a stack, when the server cannot be reached', async () => {
    const result = await runMpay([
      'sandbox',
      'trigger',
      'expired',
      '--api-key',
      merchant.sandbox,
      '--url',
      'http://127.0.0.1:9',
    ]);
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stderr, /^mpay sandbox: cannot reach http:\/\/127\.0\.0\.1:9/);
    assert.doesNotMatch(result.stderr, STACK_LINE);
  });
});
