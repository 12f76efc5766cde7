import { parseArgs } from 'node:util';
import { CliError, type CommandGroup } from '../context.ts';

const SCENARIOS = ['matched_then_completed', 'matched_then_failed', 'expired', 'settlement_cycle', 'matched_partial_fill'];

const sandbox: CommandGroup = {
  summary: 'play a sandbox payment scenario (test or sandbox key); signed webhooks follow',
  usage: `mpay --api-key KEY sandbox trigger <${SCENARIOS.join('|')}> [--amount MINOR] [--currency THB|AUD|USD|SGD] [--order-id ID]`,
  async run(args, context) {
    const [action, ...rest] = args;
    const { values, positionals } = parseArgs({ args: rest, options: { amount: { type: 'string' }, currency: { type: 'string' }, 'order-id': { type: 'string' } }, allowPositionals: true });
    const [scenario] = positionals;
    if (action !== 'trigger' || !scenario) throw new CliError(`usage: ${sandbox.usage}`, 2);
    if (!SCENARIOS.includes(scenario)) throw new CliError(`unknown scenario "${scenario}"; one of ${SCENARIOS.join(', ')}`, 2);
    if (values.amount !== undefined && !/^\d+$/.test(values.amount)) throw new CliError('--amount is an integer in minor units (10000 = 100.00)', 2);
    const body = {
      scenario,
      ...(values.amount ? { amount: Number(values.amount) } : {}),
      ...(values.currency ? { currency: values.currency.toUpperCase() } : {}),
      ...(values['order-id'] ? { order_id: values['order-id'] } : {}),
    };
    const { body: response } = await context.request('POST', '/v1/sandbox/payments/simulate', { auth: 'key', body });
    const payment = response.data.payment;
    const legs = (payment.match_details as { seller_id: string; allocated_fiat_amount: number }[]).map((leg) => `    leg ${leg.allocated_fiat_amount} -> seller ${leg.seller_id}`);
    context.print(response.data, [`${scenario}: payment ${payment.id} is ${payment.status} (${payment.amount} ${payment.currency} minor units)`, ...legs, 'webhooks follow on your endpoint (mpay listen shows them)'].join('\n'));
    return 0;
  },
};
export default sandbox;
