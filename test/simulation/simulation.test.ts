import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { simulate } from './world.ts';

/**
 * Fixed seeds of the whole-flow simulation, on whichever store the suite runs. On PostgreSQL, where the data outlives
 * the application, it is also restarted now and then, half of the times after the server killed every connection.
 * A failing seed is replayed with `./run simulate --seed N --steps K [--crashes]`.
 */
const SEEDS = [11, 29, 503, 7_919];
const STEPS = 250;
const restarts = Boolean(process.env['DATABASE_URL']);

describe('whole-flow simulation', () => {
  for (const seed of SEEDS) {
    it(`seed ${seed}: ${STEPS} steps with injected faults end conserved, reconciled and with nothing stuck`, async () => {
      const report = await simulate({ seed, steps: STEPS, restarts, crashes: restarts });
      assert.deepEqual(
        report.problems,
        [],
        `replay: ./run simulate --seed ${seed} --steps ${STEPS}${restarts ? ' --crashes' : ''}`,
      );
      // The run did exercise the flows and the faults it claims to (a simulation that drove nothing proves nothing).
      for (const action of [
        'payment.create',
        'payment.proof',
        'pending_funds.confirm',
        'sell.create',
        'buy.create',
        'settlement.run',
      ]) {
        assert.ok(
          (report.actions[action]?.ok ?? 0) > 0,
          `${action} never succeeded: ${JSON.stringify(report.actions[action])}`,
        );
      }
      assert.ok(report.faults.validator > 0, 'no validator fault was injected');
      assert.ok(
        Object.keys(report.final['payments'] ?? {}).length >= 2,
        `payments ended in one state only: ${JSON.stringify(report.final['payments'])}`,
      );
    });
  }
});
