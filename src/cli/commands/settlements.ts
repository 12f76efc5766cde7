import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { CliError, type CommandGroup } from '../context.ts';

const USAGE = [
  'mpay settlements run',
  '| list [--status completed,failed] [--limit N]',
  '| get ID | payments ID | export ID [--out FILE]',
  '| fail ID --reason TEXT | retry ID | adjust ID --amount-minor N --reason TEXT | audit-log ID',
  '(list, get, payments and export use --api-key; the rest the admin token)',
].join(' ');

function line(batch: any): string {
  return `${batch.id}  ${batch.is_sandbox ? 'sandbox' : 'live   '}  ${batch.status.padEnd(9)}  ${batch.currency} gross ${batch.gross_decimal} fee ${batch.fee_decimal} net ${batch.net_decimal} (${batch.payment_count} payments)`;
}

const settlements: CommandGroup = {
  summary: 'run settlement, read batches, export CSV, retry and adjust batches',
  usage: USAGE,
  async run(args, context) {
    const [action, ...rest] = args;
    const { values, positionals } = parseArgs({
      args: rest,
      options: {
        status: { type: 'string' },
        limit: { type: 'string' },
        out: { type: 'string' },
        reason: { type: 'string' },
        'amount-minor': { type: 'string' },
      },
      allowPositionals: true,
    });
    const id = positionals[0];
    const needId = () => {
      if (!id) throw new CliError(`settlements ${action} needs a settlement ID`, 2);
      return encodeURIComponent(id);
    };
    switch (action) {
      case 'run': {
        const { body } = await context.request('POST', '/admin/settlements/run');
        const data = body.data;
        context.print(
          data,
          data.batches.length === 0
            ? 'nothing to settle'
            : [
                `settled ${data.payment_count} payments in ${data.batches.length} batches`,
                ...data.batches.map(line),
              ].join('\n'),
        );
        return 0;
      }
      case 'list': {
        const query = new URLSearchParams();
        if (values.status) query.set('status', values.status);
        if (values.limit) query.set('limit', values.limit);
        const { body } = await context.request('GET', `/v1/settlements${query.size ? `?${query}` : ''}`, {
          auth: 'key',
        });
        context.print(body, body.data.length === 0 ? 'no settlements' : body.data.map(line).join('\n'));
        return 0;
      }
      case 'get': {
        const { body } = await context.request('GET', `/v1/settlements/${needId()}`, { auth: 'key' });
        context.print(body.data, line(body.data));
        return 0;
      }
      case 'payments': {
        const { body } = await context.request('GET', `/v1/settlements/${needId()}/payments?limit=100`, {
          auth: 'key',
        });
        context.print(
          body,
          body.data
            .map(
              (row: any) =>
                `${row.payment_id}  ${row.order_id}  ${row.amount_decimal} - fee ${row.fee_decimal} = ${row.net_decimal}`,
            )
            .join('\n'),
        );
        return 0;
      }
      case 'export': {
        const { body } = await context.request('GET', `/v1/settlements/${needId()}/export.csv`, { auth: 'key' });
        if (values.out) {
          await writeFile(values.out, String(body));
          context.print({ written: values.out }, `wrote ${values.out}`);
        } else {
          context.stdout.write(String(body));
        }
        return 0;
      }
      case 'fail': {
        if (!values.reason) throw new CliError('settlements fail needs --reason', 2);
        const { body } = await context.request('POST', `/admin/settlements/${needId()}/fail`, {
          body: { reason: values.reason },
        });
        context.print(body.data, line(body.data));
        return 0;
      }
      case 'retry': {
        const { body } = await context.request('POST', `/admin/settlements/${needId()}/retry`);
        context.print(body.data, line(body.data));
        return 0;
      }
      case 'adjust': {
        const amount = Number(values['amount-minor']);
        if (!values['amount-minor'] || !Number.isSafeInteger(amount) || amount === 0)
          throw new CliError('settlements adjust needs --amount-minor (a non-zero integer)', 2);
        if (!values.reason) throw new CliError('settlements adjust needs --reason', 2);
        const { body } = await context.request('POST', `/admin/settlements/${needId()}/adjustments`, {
          body: { amount_minor: amount, reason: values.reason },
        });
        context.print(body.data, line(body.data));
        return 0;
      }
      case 'audit-log': {
        const { body } = await context.request('GET', `/admin/settlements/${needId()}/audit-log?limit=100`);
        context.print(
          body,
          body.data
            .map(
              (entry: any) =>
                `${entry.created_at}  ${entry.action}  by ${entry.actor_user_id}  ${JSON.stringify(entry.details)}`,
            )
            .join('\n'),
        );
        return 0;
      }
      default:
        throw new CliError(`usage: ${USAGE}`, 2);
    }
  },
};
export default settlements;
