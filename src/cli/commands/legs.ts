import { parseArgs } from 'node:util';
import { CliError, type CommandGroup } from '../context.ts';

const USAGE = [
  'mpay legs list [--status awaiting_payee] [--limit N]',
  '| confirm PAYMENT_ID N',
  '| reject PAYMENT_ID N --reason TEXT',
  "(the operator deciding for a leg's seller whether the money arrived; audited)",
].join(' ');

function line(leg: any): string {
  const reference = leg.reference ? ` ref ${leg.sending_bank ?? '?'}:${leg.reference}` : '';
  return `${leg.payment_id} leg ${leg.match_order}  ${leg.status.padEnd(14)}  ${leg.amount_minor} ${leg.currency} (minor)  seller ${leg.seller_id}${reference}`;
}

const legs: CommandGroup = {
  summary: 'list payment legs waiting for their seller, and confirm or reject them for it',
  usage: USAGE,
  async run(args, context) {
    const [action, ...rest] = args;
    const { values, positionals } = parseArgs({
      args: rest,
      options: { status: { type: 'string' }, limit: { type: 'string' }, reason: { type: 'string' } },
      allowPositionals: true,
    });
    const leg = () => {
      const [payment_id, n] = positionals;
      if (!payment_id || !n || !/^[1-9]\d*$/.test(n))
        throw new CliError(`legs ${action} needs a PAYMENT_ID and the leg's number N`, 2);
      return `/admin/payments/${encodeURIComponent(payment_id)}/legs/${n}`;
    };
    switch (action) {
      case 'list': {
        const query = new URLSearchParams();
        if (values.status) query.set('status', values.status);
        if (values.limit) query.set('limit', values.limit);
        const { body } = await context.request('GET', `/admin/legs${query.size ? `?${query}` : ''}`);
        context.print(body, body.data.length === 0 ? 'no legs' : body.data.map(line).join('\n'));
        return 0;
      }
      case 'confirm': {
        const { body } = await context.request('POST', `${leg()}/confirm`);
        context.print(body.data, `confirmed: ${line(body.data)}`);
        return 0;
      }
      case 'reject': {
        const path = leg();
        if (!values.reason) throw new CliError('legs reject needs --reason', 2);
        const { body } = await context.request('POST', `${path}/reject`, { body: { reason: values.reason } });
        context.print(body.data, `rejected: ${line(body.data)}`);
        return 0;
      }
      default:
        throw new CliError(`usage: ${USAGE}`, 2);
    }
  },
};
export default legs;
