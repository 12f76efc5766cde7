import { Gauge, type Registry } from 'prom-client';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';

/** How long a scrape waits for the waiting legs' read. */
const SCRAPE_READ_MS = 1_000;

/**
 * Live legs waiting for their seller's word (DESIGN 3b): such a leg never expires, because the buyer may have paid, so
 * a seller who never answers keeps its payment `confirming` and its liquidity reserved until an operator decides for
 * it (`POST /admin/payments/{id}/legs/{n}/confirm` or `/reject`, `mpay legs`). Two gauges tell the operator: how many
 * legs wait, and how long the oldest has. They are read when `/metrics` is scraped (one statement on the partial index
 * of waiting slips), so every process that serves `/metrics` shows them; a scrape while the database fails or is slower
 * than SCRAPE_READ_MS keeps the last values.
 */
export function registerWaitingLegGauges(registry: Registry, deps: { db: Db; clock: Clock }): void {
  let reading: Promise<Reading | null> | undefined;
  // the two gauges of one scrape share one read
  const read = () =>
    (reading ??= Promise.race([
      readWaitingLegs(deps),
      new Promise<null>((resolve) => setTimeout(resolve, SCRAPE_READ_MS, null).unref()),
    ])
      .catch(() => null)
      .finally(() => {
        reading = undefined;
      }));
  new Gauge({
    name: 'mpay_payment_legs_awaiting_payee',
    help: "Live payment legs whose slip waits for its seller's confirmation (their payments stay confirming)",
    registers: [registry],
    async collect() {
      const now = await read();
      if (now) this.set(now.waiting);
    },
  });
  new Gauge({
    name: 'mpay_payment_legs_awaiting_payee_oldest_seconds',
    help: 'How long the oldest live leg has waited for its seller, 0 when none waits (an operator may decide for a silent seller)',
    registers: [registry],
    async collect() {
      const now = await read();
      if (now) this.set(now.oldest_seconds);
    },
  });
}

interface Reading {
  waiting: number;
  oldest_seconds: number;
}

async function readWaitingLegs(deps: { db: Db; clock: Clock }): Promise<Reading> {
  const row = await deps.db
    .selectFrom('payment_proofs as proof')
    .innerJoin('payments', 'payments.id', 'proof.payment_id')
    .select((eb) => [eb.fn.countAll<string>().as('waiting'), eb.fn.min('proof.awaiting_payee_at').as('oldest')])
    .where('proof.verdict', '=', 'awaiting_payee')
    .where('payments.status', '=', 'confirming')
    .where('payments.is_sandbox', '=', false)
    .executeTakeFirstOrThrow();
  const oldest = row.oldest === null ? null : new Date(row.oldest);
  return {
    waiting: Number(row.waiting),
    oldest_seconds: oldest ? Math.max(0, Math.floor((deps.clock.now().getTime() - oldest.getTime()) / 1000)) : 0,
  };
}
