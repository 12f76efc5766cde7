/**
 * The client as a merchant gets it: `npm pack`, the tarball installed offline into a scratch project, a program
 * (test/consumer/app.ts) type-checked against the installed `.d.ts` and compiled with tsc, then run against a
 * started server on Node 24 and on Node 20.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { startTestApp, thbSeller, type TestApp, type TestMerchant } from '../../../test/helpers/app.ts';
import { fund, PAY } from '../../../test/helpers/orders.ts';

const run = promisify(execFile);
const client_dir = resolve(import.meta.dirname, '..');
const repository = resolve(client_dir, '../..');
const tsc = join(client_dir, 'node_modules/typescript/bin/tsc');

/** The environment of a child process, without the npm_* settings of the `npm run` this suite may run under. */
function cleanEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));
}

/** A Node.js 20 on this machine (Debian's /usr/bin/node, or one on PATH), else undefined. */
async function findNode20(): Promise<string | undefined> {
  const candidates = [
    '/usr/bin/node',
    '/usr/local/bin/node',
    ...(process.env['PATH'] ?? '').split(delimiter).map((dir) => join(dir, 'node')),
  ];
  for (const candidate of new Set(candidates)) {
    const version = await run(candidate, ['-p', 'process.versions.node']).then(
      ({ stdout }) => stdout.trim(),
      () => '',
    );
    if (version.startsWith('20.')) return candidate;
  }
  return undefined;
}

describe('@mpay/client as an installed package', () => {
  let t: TestApp;
  let base_url: string;
  let scratch: string;
  let tarball: string;
  let packed_files: string[];
  const merchants: TestMerchant[] = [];

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'mpay-client-'));
    const env = cleanEnvironment();
    // `npm pack` runs the prepack build (tsc into dist/) and writes the tarball into the scratch directory.
    const packed = await run('npm', ['pack', '--json', '--pack-destination', scratch], {
      cwd: client_dir,
      env,
      maxBuffer: 16 * 1024 * 1024,
    });
    const [summary] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as {
      filename: string;
      files: { path: string }[];
    }[];
    assert.ok(summary);
    tarball = join(scratch, summary.filename);
    packed_files = summary.files.map((file) => file.path).sort();

    const project = join(scratch, 'shop');
    await mkdir(join(project, 'src'), { recursive: true });
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'shop', private: true, type: 'module' }));
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], {
      cwd: project,
      env,
    });
    await copyFile(join(client_dir, 'test/consumer/app.ts'), join(project, 'src/app.ts'));

    t = await startTestApp();
    base_url = await t.application.app.listen({ port: 0, host: '127.0.0.1' });
    await t.createSeller(thbSeller(100_000_000, '35.00'));
    for (const name of ['Node 24 shop', 'Node 20 shop']) {
      const merchant = await t.createMerchant(name);
      await fund(t, merchant.id, 10 * PAY, false);
      await fund(t, merchant.id, 4 * PAY, true);
      merchants.push(merchant);
    }
  });
  after(async () => {
    await t?.close();
    await rm(scratch, { recursive: true, force: true });
  });

  it('packs compiled JavaScript with declarations, the README and nothing else', () => {
    for (const file of [
      'package.json',
      'README.md',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/webhooks.js',
      'dist/webhooks.d.ts',
      'dist/generated/schema.d.ts',
    ]) {
      assert.ok(packed_files.includes(file), `${file} missing from ${packed_files.join(', ')}`);
    }
    assert.deepEqual(
      packed_files.filter((file) => !file.startsWith('dist/') && file !== 'package.json' && file !== 'README.md'),
      [],
    );
    assert.deepEqual(
      packed_files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts')),
      [],
    );
  });

  it('installs from the tarball alone, with no dependency of its own', async () => {
    const installed = await readdir(join(scratch, 'shop/node_modules'));
    assert.deepEqual(
      installed.filter((name) => !name.startsWith('.')),
      ['@mpay'],
    );
  });

  it('type-checks a program against the installed declarations (DOM and Node-only libs) and compiles it', async () => {
    const project = join(scratch, 'shop');
    const base = {
      strict: true,
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      skipLibCheck: false,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
      typeRoots: [join(repository, 'node_modules/@types')],
      types: ['node'],
      outDir: 'out',
      rootDir: 'src',
    };
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: base, include: ['src'] }));
    await writeFile(
      join(project, 'tsconfig.node.json'),
      JSON.stringify({ compilerOptions: { ...base, lib: ['ES2022'], noEmit: true }, include: ['src'] }),
    );
    const node_only = await run(process.execPath, [tsc, '-p', 'tsconfig.node.json'], { cwd: project }).catch(
      (error: { stdout: string }) => error,
    );
    assert.equal(node_only.stdout, '');
    const compiled = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project }).catch(
      (error: { stdout: string }) => error,
    );
    assert.equal(compiled.stdout, '');
  });

  const runs = [
    { name: "Node 24 (the project's node)", node: async () => process.execPath, merchant: 0 },
    { name: "Node 20 (the machine's /usr/bin/node)", node: findNode20, merchant: 1 },
  ];
  for (const { name, node, merchant: index } of runs) {
    it(`runs against a started server on ${name}, one secret key reaching every route`, async () => {
      const binary = await node();
      assert.ok(binary, 'no Node.js 20 on this machine (apt-get install nodejs, or put one on PATH)');
      const merchant = merchants[index]!;
      const { stdout } = await run(binary, ['out/app.js', base_url, merchant.live, merchant.sandbox, `run${index}`], {
        cwd: join(scratch, 'shop'),
      });
      const seen = JSON.parse(stdout);
      assert.equal(seen.node, index === 0 ? process.versions.node.split('.')[0] : '20');
      assert.deepEqual(seen.payment, { status: 'matched', amount: 25_000, found: true });
      assert.equal(seen.listed, 1);
      assert.deepEqual([seen.before, seen.after], [10 * PAY, 8 * PAY]);
      assert.deepEqual([seen.sell, seen.dispute, seen.disputes_listed, seen.buys], ['pending', 'opened', true, 0]);
      assert.deepEqual([seen.sandbox_balance, seen.sandbox_sells], [4 * PAY, []]);
      assert.equal(seen.simulated, 'completed');
      assert.equal(seen.error_code, '404 NOT_FOUND');
      assert.equal(seen.webhook, 'payment.completed');
    });
  }
});
