/**
 * `./run bench [scenario ...] [--pglite] [--runs N] [--seconds 5] [--connections 32] [--out bench/results/<file>.json]`
 *
 * Without a scenario: the issue's target rows (TARGETS in bench/scenarios.ts) on PostgreSQL and then the create on
 * PGlite, three runs each, every figure beside its strict baseline (bench/bare.ts) from the same run, then a summary of
 * the ratios over the runs. Otherwise runs the chosen scenarios (`all`: every one; see SCENARIOS and ALIASES) against a fresh
 * database: PostgreSQL from DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres; a database of its own,
 * dropped at the end) or PGlite in memory with --pglite. The load generator is a child process (bench/load.ts).
 * Prints a table and writes the rows as JSON. Never fails on speed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { openBenchContext } from './context.ts';
import { ALIASES, SCENARIOS, TARGETS, type Row } from './scenarios.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    pglite: { type: 'boolean', default: false },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    runs: { type: 'string' },
    out: { type: 'string' },
    roles: { type: 'string' },
  },
});
const targets_run = positionals.length === 0 || (positionals.length === 1 && positionals[0] === 'targets');
const runs = Number(values.runs ?? (targets_run ? 3 : 1));
// The target rows measure the service as `./run start` runs it (every role in one process: its dispatcher hears each
// NOTIFY); other scenarios leave the worker out, so the webhooks scenario's worker processes are the only dispatchers.
const roles = values.roles ?? (targets_run ? 'api,worker,ledger' : 'api,ledger');
const requested = targets_run ? [...TARGETS.postgres] : positionals.flatMap((name) => ALIASES[name] ?? [name]);
const unknown = requested.filter((name) => !SCENARIOS[name]);
if (unknown.length) {
  process.stderr.write(
    `unknown scenario(s): ${unknown.join(', ')}; choose from ${[...Object.keys(SCENARIOS), ...Object.keys(ALIASES)].join(', ')}\n`,
  );
  process.exit(2);
}

/** The passes: (database, scenarios); the target run adds the PGlite create after PostgreSQL. */
const passes: { pglite: boolean; scenarios: string[] }[] = targets_run
  ? [
      ...(values.pglite ? [] : [{ pglite: false, scenarios: requested }]),
      { pglite: true, scenarios: [...TARGETS.pglite] },
    ]
  : [{ pglite: values.pglite, scenarios: [...new Set(requested)] }];
const rows: Row[] = [];
const started_at = new Date();
const kinds: string[] = [];
for (const pass of passes) {
  const context = await openBenchContext({
    pglite: pass.pglite,
    connections: Number(values.connections),
    seconds: Number(values.seconds),
    roles,
  });
  kinds.push(context.kind);
  // an interrupted run still drops its database
  const interrupted = () => void context.close().finally(() => process.exit(130));
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    for (let run = 1; run <= runs; run++) {
      for (const name of pass.scenarios) {
        process.stderr.write(`running ${name} on ${context.kind}${runs > 1 ? `, run ${run} of ${runs}` : ''}...\n`);
        let peak_rss = process.memoryUsage().rss;
        const sampler = setInterval(() => (peak_rss = Math.max(peak_rss, process.memoryUsage().rss)), 200);
        try {
          const produced = await SCENARIOS[name]!(context);
          for (const row of produced)
            rows.push({
              ...row,
              figure: context.kind === 'pglite' ? `PGlite: ${row.figure}` : row.figure,
              rss_mb: row.rss_mb ?? peak_rss / 1024 / 1024,
              ...(runs > 1 ? { run } : {}),
            });
        } catch (error) {
          rows.push({ scenario: name, figure: name, per_s: 0, unit: '-', note: `failed: ${(error as Error).message}` });
        } finally {
          clearInterval(sampler);
        }
      }
    }
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    await context.close();
  }
}

const fixed = (value: number | undefined, digits = 0) => (value === undefined ? '' : value.toFixed(digits));
const header = [
  'run',
  'figure',
  'rate',
  'p50 ms',
  'p99 ms',
  'baseline',
  'base rate',
  'base p99',
  'ratio',
  'target',
  'fail',
  'rss MB',
  'cpu us/req api+db+load',
  'base cpu us/req',
  'idle',
];
const table = rows.map((row) => [
  row.run === undefined ? '' : String(row.run),
  row.figure,
  `${fixed(row.per_s)} ${row.unit}`,
  fixed(row.p50_ms, 1),
  fixed(row.p99_ms, 1),
  row.baseline?.figure ?? '',
  fixed(row.baseline?.per_s),
  fixed(row.baseline?.p99_ms, 1),
  row.ratio === undefined ? '' : `${row.ratio.toFixed(2)}x`,
  row.target ?? '',
  row.failures === undefined ? '' : String(row.failures),
  fixed(row.rss_mb),
  row.cpu ? `${fixed(row.cpu.api_us)}+${fixed(row.cpu.db_us)}+${fixed(row.cpu.load_us)}` : '',
  row.baseline?.cpu
    ? `${fixed(row.baseline.cpu.api_us)}+${fixed(row.baseline.cpu.db_us)}+${fixed(row.baseline.cpu.load_us)}`
    : '',
  row.cpu ? `${fixed(row.cpu.idle * 100)}%` : '',
]);
const widths = header.map((title, column) => Math.max(title.length, ...table.map((cells) => cells[column]!.length)));
const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ');
const machine = `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), load ${os
  .loadavg()
  .map((load) => load.toFixed(2))
  .join(' ')}, Node ${process.version}`;
console.log(
  `\nmpay bench on ${kinds.join(' then ')}, ${values.connections} connections, ${values.seconds} s per figure${runs > 1 ? `, ${runs} runs` : ''}; ${machine}\n`,
);
console.log(line(header));
console.log(widths.map((width) => '-'.repeat(width)).join('-|-'));
for (const cells of table) console.log(line(cells));
for (const row of rows.filter((row) => row.note))
  console.log(`  ${row.run === undefined ? '' : `run ${row.run}: `}${row.figure}: ${row.note}`);

if (runs > 1) {
  // one line per figure: its rate and ratio in every run, the range, and the target
  console.log('\nover the runs (figure: rate req/s [ratio to its baseline in the same run] per run)');
  const figures = [...new Set(rows.map((row) => row.figure))];
  for (const figure of figures) {
    const of = rows.filter((row) => row.figure === figure);
    const runs_text = of
      .map(
        (row) =>
          `${fixed(row.per_s)}${row.ratio === undefined ? '' : ` [${row.ratio.toFixed(2)}x, p99 ${fixed(row.p99_ms, 1)} ms]`}`,
      )
      .join('; ');
    const ratios = of.flatMap((row) => (row.ratio === undefined ? [] : [row.ratio]));
    const range = ratios.length ? ` -> ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}x` : '';
    console.log(`  ${figure}: ${runs_text}${range}${of[0]?.target ? ` (target ${of[0].target})` : ''}`);
  }
}

const out = values.out ?? `bench/results/${kinds.join('-')}-${started_at.toISOString().replace(/[:.]/g, '-')}.json`;
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify({ database: kinds.join(' then '), runs, connections: Number(values.connections), seconds: Number(values.seconds), machine, started_at: started_at.toISOString(), rows }, null, 2)}\n`,
);
console.log(`\nrows written to ${out}`);
