/**
 * Ledger and receiver-confirm throughput on PostgreSQL, beside a bare one-row-insert baseline in the same run.
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/ledger.ts [operations] [concurrency]
 * Each run creates its own database (dropped at the end). Prints figures and ratios; never fails on speed.
 */
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { createApplication, type Application } from '../src/app.ts';
import { createHttpLedger } from '../src/modules/ledger/http-client.ts';
import { accounts, type Ledger } from '../src/modules/ledger/port.ts';
import { INTERNAL_TOKEN, startTestApp } from '../test/helpers/app.ts';
import { createPendingFunds, RECEIPT } from '../test/pending-funds/helpers.ts';

process.env['DATABASE_URL'] ??= 'postgres://postgres@127.0.0.1:5432/postgres';
const operations = Number(process.argv[2] ?? 2000);
const concurrency = Number(process.argv[3] ?? 8);

async function timed(label: string, count: number, work: (index: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await work(next++);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const rate = count / seconds;
  console.log(`${label.padEnd(36)} ${String(count).padStart(6)} ops  ${seconds.toFixed(2).padStart(6)} s  ${rate.toFixed(0).padStart(7)} ops/s`);
  return rate;
}

const t = await startTestApp();
const { db } = t;
const pairs = Array.from({ length: 64 }, (_, i) => accounts.merchantAvailable(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, false));
async function fund(ledger: Ledger, prefix: string) {
  for (const [i, account] of pairs.entries()) {
    await ledger.transfer({ key: `${prefix}-fund-${i}`, kind: 'mint', debit_account: accounts.world(false), credit_account: account, amount_micro_pay: 1_000_000_000 });
  }
}
const transferOp = (ledger: Ledger, prefix: string) => (index: number) =>
  ledger.transfer({ key: `${prefix}-${index}`, kind: 'transfer', debit_account: pairs[index % pairs.length]!, credit_account: pairs[(index * 7 + 3) % pairs.length]!, amount_micro_pay: 1 + (index % 100) });

console.log(`PostgreSQL, ${operations} operations per measurement, concurrency ${concurrency}`);
await sql`create table bench_baseline (id bigserial primary key, key text not null, amount bigint not null, created_at timestamptz not null default now())`.execute(db);
const baseline = await timed('baseline: one-row insert', operations, (index) => db.insertInto('bench_baseline' as never).values({ key: `b-${index}`, amount: index } as never).execute());

await fund(t.application.ledger, 'in');
const in_process = await timed('ledger transfer (in-process)', operations, transferOp(t.application.ledger, 'in'));

// A ledger server (ROLES=ledger) on loopback over the same database, called through the HTTP adapter.
const server: Application = await createApplication({ config: { ...t.application.config, roles: new Set(['ledger'] as const) }, database: t.application.database, clock: t.clock });
await server.app.listen({ host: '127.0.0.1', port: 0 });
const http_ledger = createHttpLedger({ base_url: `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`, token: INTERNAL_TOKEN, timeout_ms: 10_000 });
await fund(http_ledger, 'http');
const over_http = await timed('ledger transfer (HTTP adapter)', operations, transferOp(http_ledger, 'http'));

const receiver = await t.createMerchant('Bench receiver');
const confirm_count = Math.max(100, Math.floor(operations / 4));
const ids: string[] = [];
for (let i = 0; i < confirm_count; i += 1) ids.push((await createPendingFunds(t, receiver.id, 1_000_000)).json().data.id);
const confirms = await timed('receiver-confirm (HTTP inject, null)', confirm_count, async (index) => {
  const response = await t.call('POST', `/v1/pending-funds/${ids[index]}/receiver-confirm`, receiver.live, RECEIPT);
  if (response.statusCode !== 201) throw new Error(`receiver-confirm ${response.statusCode} ${response.body}`);
});

const verification = await t.application.ledger.verify();
console.log('');
console.log(`in-process transfer / baseline insert: ${(in_process / baseline).toFixed(2)}x`);
console.log(`HTTP transfer / in-process transfer:   ${(over_http / in_process).toFixed(2)}x`);
console.log(`receiver-confirm / baseline insert:    ${(confirms / baseline).toFixed(2)}x`);
console.log(`ledger verify after the run: ${verification.ok ? 'OK' : verification.problems.join('; ')} (${verification.transfers} transfers)`);
await server.close();
await t.close();
