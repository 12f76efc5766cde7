import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runMpay, runMpayProcess } from '../helpers/cli.ts';

const COMMANDS = (await readdir(new URL('../../src/cli/commands/', import.meta.url)))
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.replace(/\.ts$/, ''));

describe('mpay --help, help <command> and --version', () => {
  let dir: string;
  // No server listens here and the data directory does not exist: a command that did anything would fail or create it.
  let env: Record<string, string>;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mpay-help-'));
    env = { MPAY_URL: 'http://127.0.0.1:9', DATA_DIR: join(dir, 'store'), DATABASE_URL: '' };
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('prints help and does nothing else for every command and subcommand', async () => {
    assert.ok(COMMANDS.includes('migrate') && COMMANDS.includes('listen'));
    const runs = [
      ...COMMANDS.map((command) => [command, '--help']),
      ['migrate', '-h'],
      ['--json', 'settlements', 'run', '--help'],
      ['listen', '--forward-to', 'http://127.0.0.1:9/hook', '--help'],
    ];
    const results = await Promise.all(runs.map((args) => runMpay(args, env)));
    results.forEach((result, index) => {
      const args = runs[index]!.join(' ');
      assert.equal(result.code, 0, `${args}: ${result.stderr}`);
      assert.equal(result.stderr, '', args);
      assert.match(
        result.stdout,
        new RegExp(`^mpay ${runs[index]!.find((arg) => COMMANDS.includes(arg))}: .+\\n\\nUsage:\\n  mpay `),
        args,
      );
    });
    assert.equal(existsSync(join(dir, 'store')), false, 'migrate --help must not open or create the store');
  });

  it("help <command> prints that command's help; help and --help list every command", async () => {
    const one = await runMpay(['help', 'migrate'], env);
    assert.equal(one.code, 0);
    assert.match(one.stdout, /^mpay migrate: apply pending database migrations/);
    for (const args of [['help'], ['--help']]) {
      const all = await runMpay(args, env);
      assert.equal(all.code, 0, args.join(' '));
      for (const command of COMMANDS)
        assert.match(all.stdout, new RegExp(`\\n  ${command} `), `${args.join(' ')} lists ${command}`);
    }
    const unknown = await runMpay(['help', 'nope'], env);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command "nope"/);
    assert.equal((await runMpay([], env)).code, 2);
  });

  it('--version prints the package version', async () => {
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    for (const [args, run] of [
      [['--version'], runMpayProcess],
      [['-V'], runMpay],
    ] as const) {
      const result = await run([...args], env);
      assert.equal(result.code, 0);
      assert.equal(result.stdout, `mpay ${version}\n`);
    }
  });
});
