import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { newSlipReference, slipImage } from '../../modules/sandbox/slip-image.ts';
import { PAYMENT_EVENT_SCENARIOS, SYNTHETIC_EVENT_TYPES } from '../../modules/sandbox/event-types.ts';
import { CliError, type CommandGroup } from '../context.ts';

const SCENARIOS = [
  'matched_then_completed',
  'matched_then_failed',
  'expired',
  'settlement_cycle',
  'matched_partial_fill',
];
const EVENT_TYPES: readonly string[] = [...Object.keys(PAYMENT_EVENT_SCENARIOS), ...SYNTHETIC_EVENT_TYPES];

const sandbox: CommandGroup = {
  summary:
    'play a sandbox payment scenario or emit a sandbox event of any type (test or sandbox key); signed webhooks follow',
  usage: [
    `mpay --api-key KEY sandbox trigger <${SCENARIOS.join('|')}> [--amount MINOR] [--currency THB|AUD|USD|SGD] [--order-id ID]`,
    'mpay --api-key KEY sandbox trigger <event type>      e.g. payment.completed, sell_order.completed, buy_order.matched,',
    '                                                     gateway.dispute.opened, pending_funds.confirmed, settlement.failed',
    'mpay sandbox trigger --list                          every scenario and event type',
    'mpay sandbox slip --out FILE [--reference REF] [--format png|jpeg] [--variant N] [--qr slip|none|damaged]',
    '                                                     a slip image with a real slip-verification QR (no server needed)',
  ].join('\n'),
  async run(args, context) {
    const [action, ...rest] = args;
    if (action === 'slip') return writeSlip(rest, context);
    const { values, positionals } = parseArgs({
      args: rest,
      options: {
        amount: { type: 'string' },
        currency: { type: 'string' },
        'order-id': { type: 'string' },
        list: { type: 'boolean', default: false },
      },
      allowPositionals: true,
    });
    if (action === 'trigger' && values.list) {
      context.print(
        { scenarios: SCENARIOS, event_types: EVENT_TYPES },
        [`scenarios:   ${SCENARIOS.join(', ')}`, `event types: ${EVENT_TYPES.join(', ')}`].join('\n'),
      );
      return 0;
    }
    const [name] = positionals;
    if (action !== 'trigger' || !name) throw new CliError(`usage: ${sandbox.usage}`, 2);
    if ((SYNTHETIC_EVENT_TYPES as readonly string[]).includes(name)) {
      // Sell orders, buy orders, disputes, pending funds, settlements: a synthetic sandbox event through the outbox.
      const { body: response } = await context.request('POST', '/v1/sandbox/events', {
        auth: 'key',
        body: { type: name },
      });
      const resource = response.data.event.data as { id?: string; status?: string };
      context.print(
        response.data,
        `${name}: event ${response.data.id} for ${resource.id ?? '?'} (${resource.status ?? '-'})\nwebhooks follow on your sandbox endpoints (mpay listen shows them)`,
      );
      return 0;
    }
    const scenario = SCENARIOS.includes(name) ? name : PAYMENT_EVENT_SCENARIOS[name];
    if (!scenario)
      throw new CliError(
        `unknown scenario or event type "${name}"; one of ${[...SCENARIOS, ...EVENT_TYPES].join(', ')}`,
        2,
      );
    if (values.amount !== undefined && !/^\d+$/.test(values.amount))
      throw new CliError('--amount is an integer in minor units (10000 = 100.00)', 2);
    const body = {
      scenario,
      ...(values.amount ? { amount: Number(values.amount) } : {}),
      ...(values.currency ? { currency: values.currency.toUpperCase() } : {}),
      ...(values['order-id'] ? { order_id: values['order-id'] } : {}),
    };
    const { body: response } = await context.request('POST', '/v1/sandbox/payments/simulate', { auth: 'key', body });
    const payment = response.data.payment;
    const legs = (payment.match_details as { seller_id: string; allocated_fiat_amount: number }[]).map(
      (leg) => `    leg ${leg.allocated_fiat_amount} -> seller ${leg.seller_id}`,
    );
    context.print(
      response.data,
      [
        `${scenario}: payment ${payment.id} is ${payment.status} (${payment.amount} ${payment.currency} minor units)`,
        ...legs,
        'webhooks follow on your endpoint (mpay listen shows them)',
      ].join('\n'),
    );
    return 0;
  },
};
/**
 * Writes a slip-like image whose slip-verification QR the default validator (slip_qr) reads: a new reference each
 * time, or `--reference` again with another `--variant` for the same transfer photographed twice (a duplicate).
 */
async function writeSlip(args: string[], context: Parameters<CommandGroup['run']>[1]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      out: { type: 'string' },
      reference: { type: 'string' },
      format: { type: 'string', default: 'png' },
      variant: { type: 'string', default: '0' },
      qr: { type: 'string', default: 'slip' },
    },
  });
  if (!values.out) throw new CliError('--out FILE is required', 2);
  if (values.format !== 'png' && values.format !== 'jpeg') throw new CliError('--format is png or jpeg', 2);
  if (values.qr !== 'slip' && values.qr !== 'none' && values.qr !== 'damaged')
    throw new CliError('--qr is slip, none or damaged', 2);
  if (!/^\d{1,4}$/.test(values.variant)) throw new CliError('--variant is a small integer', 2);
  if (values.reference !== undefined && !/^[0-9A-Za-z]{6,40}$/.test(values.reference))
    throw new CliError('--reference is 6 to 40 letters and digits', 2);
  const reference = values.reference ?? newSlipReference();
  const bytes = slipImage({ reference, format: values.format, variant: Number(values.variant), qr: values.qr });
  await writeFile(values.out, bytes);
  context.print(
    { reference, file: values.out, bytes: bytes.byteLength },
    `slip ${reference} written to ${values.out} (${bytes.byteLength} bytes)`,
  );
  return 0;
}

export default sandbox;
