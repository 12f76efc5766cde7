import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { coverageTable, simulate, type SimulationReport } from './world.ts';

/**
 * Fixed seeds of the whole-flow simulation, on whichever store the suite runs. Each seed plays its own workload (swarm
 * testing: the seed scales every action's weight and switches some off). On PostgreSQL, where the data outlives the
 * application, it is also restarted now and then, half of the times after the server killed every connection.
 * A failing seed is replayed with `./run simulate --seed N --steps K [--crashes]`.
 */
const SEEDS = [11, 29, 503, 7_919];
/**
 * Played only when the fixed seeds left a transition under-explored in this run. Concurrent actions interleave as the
 * machine's load lets them, so a seed's path (and what it reaches) varies from run to run; a transition that no
 * seed can reach still fails, after these.
 */
const MORE_SEEDS = [1_002, 1_025, 13, 211];
const STEPS = 250;
const restarts = Boolean(process.env['DATABASE_URL']);

/**
 * Every status transition of every flow the simulation drives (the event each emits), and how often the fixed seeds
 * together must reach it: a path reached only once or twice is a path hardly explored.
 */
const TRANSITIONS = [
  'payment.matched',
  'payment.confirming',
  'payment.completed',
  'payment.failed',
  'payment.expired',
  'sell_order.cash_leg_requested',
  'sell_order.completed',
  'sell_order.failed',
  'buy_order.created',
  'buy_order.matched',
  'buy_order.partially_filled',
  'buy_order.cancelled',
  'buy_order.expired',
  'gateway.dispute.opened',
  'gateway.dispute.resolved',
  'pending_funds.validated',
  'pending_funds.confirmed',
  'pending_funds.failed',
  'pending_funds.expired',
  'settlement.completed',
  'settlement.failed',
  'settlement.retried',
  'leg.awaiting_payee',
  'refund.created',
  'refund.updated',
  'refund.succeeded',
  'refund.failed',
  'refund.canceled',
];
const AT_LEAST = 3;

describe('whole-flow simulation', () => {
  const reports: SimulationReport[] = [];
  for (const seed of SEEDS) {
    it(`seed ${seed}: ${STEPS} steps with injected faults and cheaters end conserved, reconciled, with no honest party out of pocket and nothing stuck`, async () => {
      const report = await simulate({ seed, steps: STEPS, restarts, crashes: restarts });
      reports.push(report);
      assert.deepEqual(
        report.problems,
        [],
        `replay: ./run simulate --seed ${seed} --steps ${STEPS}${restarts ? ' --crashes' : ''}`,
      );
      assert.ok(report.faults.validator > 0, 'no validator fault was injected');
      assert.ok(
        Object.keys(report.final['payments'] ?? {}).length >= 2,
        `payments ended in one state only: ${JSON.stringify(report.final['payments'])}`,
      );
    });
  }

  it(`together the seeds reach every transition at least ${AT_LEAST} times, and every action succeeds in-run`, {
    timeout: 900_000,
  }, async () => {
    assert.equal(reports.length, SEEDS.length, 'every seed ran');
    const reached: Record<string, number> = {};
    const actions: SimulationReport['actions'] = {};
    const answers: SimulationReport['coverage']['answers'] = {};
    const add = (report: SimulationReport) => {
      for (const [type, count] of Object.entries(report.coverage.transitions))
        reached[type] = (reached[type] ?? 0) + count;
      for (const [name, { runs, ok }] of Object.entries(report.actions)) {
        const entry = (actions[name] ??= { runs: 0, ok: 0 });
        entry.runs += runs;
        entry.ok += ok;
      }
      for (const [name, counts] of Object.entries(report.coverage.answers))
        for (const [answer, count] of Object.entries(counts))
          (answers[name] ??= {})[answer] = (answers[name]?.[answer] ?? 0) + count;
    };
    for (const report of reports) add(report);
    const rareNow = () =>
      TRANSITIONS.filter((type) => (reached[type] ?? 0) < AT_LEAST).map((type) => `${type} x${reached[type] ?? 0}`);
    const more = [...MORE_SEEDS];
    for (let seed = more.shift(); seed !== undefined && rareNow().length > 0; seed = more.shift()) {
      // a further seed explores more and is held to every rule of the fixed ones
      const report = await simulate({ seed, steps: STEPS, restarts, crashes: restarts });
      reports.push(report);
      assert.deepEqual(
        report.problems,
        [],
        `replay: ./run simulate --seed ${seed} --steps ${STEPS}${restarts ? ' --crashes' : ''}`,
      );
      add(report);
    }
    const table = coverageTable({ actions, coverage: { transitions: reached, answers } });
    assert.deepEqual(rareNow(), [], `transitions reached fewer than ${AT_LEAST} times:\n${table}`);
    // An action that never succeeds in-run explores only its refusals (the final sweep and set-up do not count, nor
    // actions that make no request). A trade is matched as it is created, so `payment.cancel` (created or matching
    // only) is a probe of the refusal alone.
    const probes = new Set(['payment.cancel']);
    const never = Object.entries(actions)
      .filter(([name, { ok }]) => answers[name] !== undefined && ok === 0)
      .map(([name]) => name)
      .filter((name) => !name.startsWith('final.') && !name.startsWith('setup.') && !probes.has(name));
    assert.deepEqual(never, [], `actions that never answered 2xx in-run:\n${table}`);
  });

  after(() => {
    if (process.env['SIMULATION_COVERAGE']) for (const report of reports) process.stdout.write(coverageTable(report));
  });
});
