import { parseArgs } from 'node:util';
import { CliError, type CommandGroup } from '../context.ts';

const sellers: CommandGroup = {
  summary: 'add live seller offers (liquidity)',
  usage:
    'mpay sellers create --currency THB --method promptpay --name NAME --liquidity-minor N --rate 35.00 [--promptpay-id ID | --payid ID | --bank-code C --account-number N --account-name NAME]',
  async run(args, context) {
    const [action, ...rest] = args;
    if (action !== 'create') throw new CliError(`usage: ${sellers.usage}`, 2);
    const { values } = parseArgs({
      args: rest,
      options: {
        currency: { type: 'string' },
        method: { type: 'string' },
        name: { type: 'string' },
        'liquidity-minor': { type: 'string' },
        rate: { type: 'string' },
        'promptpay-id': { type: 'string' },
        payid: { type: 'string' },
        'bank-code': { type: 'string' },
        'account-number': { type: 'string' },
        'account-name': { type: 'string' },
      },
    });
    for (const required of ['currency', 'method', 'name', 'liquidity-minor', 'rate'] as const) {
      if (!values[required]) throw new CliError(`sellers create needs --${required}`, 2);
    }
    const body: Record<string, unknown> = {
      currency: values.currency,
      payment_method: values.method,
      display_name: values.name,
      liquidity_minor: Number(values['liquidity-minor']),
      rate: values.rate,
    };
    if (values['promptpay-id']) body['promptpay_id'] = values['promptpay-id'];
    if (values.payid) body['payid'] = values.payid;
    if (values['bank-code'])
      body['bank'] = {
        code: values['bank-code'],
        account_number: values['account-number'],
        account_name: values['account-name'],
      };
    const { body: response } = await context.request('POST', '/admin/sellers', { body });
    context.print(
      response.data,
      `seller ${response.data.id}: ${response.data.currency} ${response.data.payment_method} at ${response.data.rate}`,
    );
    return 0;
  },
};
export default sellers;
