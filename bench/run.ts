/**
 * `./run bench [scenario ...] [--pglite] [--seconds 5] [--connections 32] [--out bench/results/<file>.json]`
 *
 * Runs the chosen scenarios (default: all; see SCENARIOS and ALIASES in bench/scenarios.ts) against a fresh
 * database: PostgreSQL from DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres; a database of its own,
 * dropped at the end) or PGlite in memory with --pglite. The load generator is a child process (bench/load.ts).
 * Prints a table and writes the rows as JSON. Never fails on speed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { openBenchContext } from './context.ts';
import { ALIASES, SCENARIOS, type Row } from './scenarios.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    pglite: { type: 'boolean', default: false },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    out: { type: 'string' },
  },
});
const requested = (positionals.length ? positionals : ['all']).flatMap((name) => ALIASES[name] ?? [name]);
const unknown = requested.filter((name) => !SCENARIOS[name]);
if (unknown.length) {
  process.stderr.write(
    `unknown scenario(s): ${unknown.join(', ')}; choose from ${[...Object.keys(SCENARIOS), ...Object.keys(ALIASES)].join(', ')}\n`,
  );
  process.exit(2);
}

const context = await openBenchContext({
  pglite: values.pglite,
  connections: Number(values.connections),
  seconds: Number(values.seconds),
});
// an interrupted run still drops its database
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void context.close().finally(() => process.exit(130));
  });
}
const rows: Row[] = [];
const started_at = new Date();
try {
  for (const name of [...new Set(requested)]) {
    process.stderr.write(`running ${name}...\n`);
    let peak_rss = process.memoryUsage().rss;
    const sampler = setInterval(() => (peak_rss = Math.max(peak_rss, process.memoryUsage().rss)), 200);
    try {
      const produced = await SCENARIOS[name]!(context);
      for (const row of produced) rows.push({ ...row, rss_mb: row.rss_mb ?? peak_rss / 1024 / 1024 });
    } catch (error) {
      rows.push({ scenario: name, figure: name, per_s: 0, unit: '-', note: `failed: ${(error as Error).message}` });
    } finally {
      clearInterval(sampler);
    }
  }
} finally {
  await context.close();
}

const fixed = (value: number | undefined, digits = 0) => (value === undefined ? '' : value.toFixed(digits));
const header = [
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
  'idle',
];
const table = rows.map((row) => [
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
  row.cpu ? `${fixed(row.cpu.idle * 100)}%` : '',
]);
const widths = header.map((title, column) => Math.max(title.length, ...table.map((cells) => cells[column]!.length)));
const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ');
const machine = `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), load ${os
  .loadavg()
  .map((load) => load.toFixed(2))
  .join(' ')}, Node ${process.version}`;
console.log(
  `\nmpay bench on ${context.kind}, ${values.connections} connections, ${values.seconds} s per figure; ${machine}\n`,
);
console.log(line(header));
console.log(widths.map((width) => '-'.repeat(width)).join('-|-'));
for (const cells of table) console.log(line(cells));
for (const row of rows.filter((row) => row.note)) console.log(`  ${row.figure}: ${row.note}`);

const out = values.out ?? `bench/results/${context.kind}-${started_at.toISOString().replace(/[:.]/g, '-')}.json`;
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify({ database: context.kind, connections: Number(values.connections), seconds: Number(values.seconds), machine, started_at: started_at.toISOString(), rows }, null, 2)}\n`,
);
console.log(`\nrows written to ${out}`);
