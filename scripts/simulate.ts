/**
 * `./run simulate --seed N --steps K [--restarts] [--crashes]`: one run of the whole-flow simulation (test/simulation/world.ts),
 * on PGlite or, with DATABASE_URL, PostgreSQL. Prints what ran and every broken invariant; exits 1 when there is one.
 */
import { parseArgs } from 'node:util';
import { coverageTable, simulate } from '../test/simulation/world.ts';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: String(Date.now() % 1_000_000) },
    steps: { type: 'string', default: '300' },
    restarts: { type: 'boolean', default: false },
    crashes: { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
  },
});
const seed = Number(values.seed);
const steps = Number(values.steps);
if (!Number.isInteger(seed) || !Number.isInteger(steps) || steps < 1) {
  process.stderr.write('usage: ./run simulate --seed N --steps K [--restarts] [--crashes] [--verbose]\n');
  process.exit(2);
}
const started = performance.now();
const report = await simulate({
  seed,
  steps,
  restarts: values.restarts || values.crashes,
  crashes: values.crashes,
  ...(values.verbose ? { log: (line: string) => process.stdout.write(`${line}\n`) } : {}),
});
const seconds = ((performance.now() - started) / 1000).toFixed(1);
process.stdout.write(
  `seed ${seed}, ${steps} steps, ${seconds} s on ${process.env['DATABASE_URL'] ? 'PostgreSQL' : 'PGlite'}\n`,
);
process.stdout.write(coverageTable(report));
process.stdout.write(
  `  faults: ${report.faults.validator} validator, ${report.faults.ledger} ledger, ${report.faults.restarts} restarts\n`,
);
for (const [table, counts] of Object.entries(report.final))
  process.stdout.write(`  ${table}: ${JSON.stringify(counts)}\n`);
if (report.problems.length) {
  process.stdout.write(
    `${report.problems.length} problem(s):\n${report.problems.map((problem) => `  - ${problem}`).join('\n')}\n`,
  );
  process.exitCode = 1;
} else process.stdout.write('no problems\n');
