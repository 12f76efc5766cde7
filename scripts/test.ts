/**
 * `./run test [file ...]`: the test suite in a few long-lived shard processes instead of one process per file.
 *
 * A test file's own process spends about 3 CPU-seconds before its first test (imports, PGlite start, the first app
 * build), over half of the suite's CPU when every file gets a process. So the files are split into
 * `TEST_SHARDS` shards (default: one per core, at most 4; node's own `--test-shard`), each running its files one
 * after another in one process (`--test-isolation=none`) while the shards run side by side. Every file still gets its
 * own database and apps; what they share is the warm process. Each shard's output is printed with a `[k/n]` prefix as
 * it comes, then one summary; the exit code is non-zero when any shard failed.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { createInterface } from 'node:readline';

const DEFAULT_FILES = ['test/**/*.test.ts', 'clients/typescript/test/*.test.ts'];
const files = process.argv.slice(2).filter((arg) => arg !== '--');
const requested = Number(process.env['TEST_SHARDS'] ?? Math.min(4, os.availableParallelism()));
// named files: never more shards than files (an empty shard would fail for want of files)
const shards = Math.min(Number.isInteger(requested) && requested >= 1 ? requested : 1, files.length || Infinity);

interface ShardResult {
  shard: number;
  code: number | null;
  counts: Map<string, number>;
}

function runShard(shard: number): Promise<ShardResult> {
  const args = [
    '--test',
    '--test-isolation=none',
    '--test-force-exit',
    '--test-timeout=120000',
    '--test-reporter=spec',
    `--test-shard=${shard}/${shards}`,
    ...(files.length ? files : DEFAULT_FILES),
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  const counts = new Map<string, number>();
  const prefix = shards > 1 ? `[${shard}/${shards}] ` : '';
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      // the spec reporter ends with lines such as "ℹ tests 632": keep them for the summary
      const summary = /^ℹ (tests|suites|pass|fail|cancelled|skipped|todo) (\d+)$/.exec(line);
      if (summary) counts.set(summary[1]!, Number(summary[2]));
      process.stdout.write(`${prefix}${line}\n`);
    });
  }
  return new Promise((resolve) => child.on('close', (code) => resolve({ shard, code, counts })));
}

const started = performance.now();
const results = await Promise.all(Array.from({ length: shards }, (_, index) => runShard(index + 1)));
const total = (name: string) => results.reduce((sum, result) => sum + (result.counts.get(name) ?? 0), 0);
const failed = results.filter((result) => result.code !== 0);
const seconds = ((performance.now() - started) / 1000).toFixed(1);
process.stdout.write(
  `\n${shards} shard(s), ${seconds} s: tests ${total('tests')}, pass ${total('pass')}, fail ${total('fail')}, cancelled ${total('cancelled')}, skipped ${total('skipped')}, todo ${total('todo')}\n`,
);
for (const result of failed)
  process.stdout.write(`shard ${result.shard}/${shards} failed (exit code ${result.code})\n`);
process.exitCode = failed.length ? 1 : 0;
