import { parseArgs } from 'node:util';
import { CliError, type CommandGroup } from '../context.ts';

const USAGE =
  'mpay orders disputes [--status S] [--kind K] [--merchant ID] [--limit N] | mpay orders dispute ID | mpay orders investigate|escalate ID [--notes TEXT] | mpay orders resolve ID --outcome favor_merchant|favor_counterparty|no_action [--notes TEXT] | mpay orders chargeback SELL_ORDER_ID --notes TEXT [--reference CASE]';

interface Dispute {
  id: string;
  kind: string;
  status: string;
  sell_order_id: string;
  merchant_id: string;
  resolution: { ledger_effect: string; amount_micro_pay: number | null } | null;
  events?: { seq: number; action: string; actor_user_id: string; created_at: string; notes: string | null }[];
}

const line = (d: Dispute) =>
  `${d.id}  ${d.status.padEnd(13)} ${d.kind.padEnd(16)} sell order ${d.sell_order_id}${d.resolution ? `  resolved: ${d.resolution.ledger_effect}${d.resolution.amount_micro_pay ? ` ${d.resolution.amount_micro_pay} micro-PAY` : ''}` : ''}`;
const detail = (d: Dispute) =>
  [
    line(d),
    ...(d.events ?? []).map(
      (e) => `  #${e.seq} ${e.created_at} ${e.action} by ${e.actor_user_id}${e.notes ? `: ${e.notes}` : ''}`,
    ),
  ].join('\n');

/** The operator's side of payouts: disputes over the admin routes (list, show, open a chargeback, investigate, escalate, resolve). */
const orders: CommandGroup = {
  summary: 'payout disputes: list, show, open a chargeback, investigate, escalate, resolve',
  usage: USAGE,
  async run(args, context) {
    const [action, ...rest] = args;
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        status: { type: 'string' },
        kind: { type: 'string' },
        merchant: { type: 'string' },
        limit: { type: 'string' },
        notes: { type: 'string' },
        outcome: { type: 'string' },
        reference: { type: 'string' },
      },
    });
    const id = positionals[0];
    const body = values.notes === undefined ? {} : { notes: values.notes };
    switch (action) {
      case 'disputes': {
        const query = new URLSearchParams();
        if (values.status) query.set('status', values.status);
        if (values.kind) query.set('kind', values.kind);
        if (values.merchant) query.set('merchant_id', values.merchant);
        if (values.limit) query.set('limit', values.limit);
        const { body: page } = await context.request('GET', `/admin/disputes${query.size ? `?${query}` : ''}`);
        context.print(page, (page.data as Dispute[]).map(line).join('\n') || 'no disputes');
        return 0;
      }
      case 'dispute': {
        if (!id) throw new CliError(`usage: ${USAGE}`, 2);
        const { body: response } = await context.request('GET', `/admin/disputes/${id}`);
        context.print(response.data, detail(response.data));
        return 0;
      }
      case 'investigate':
      case 'escalate': {
        if (!id) throw new CliError(`usage: ${USAGE}`, 2);
        const { body: response } = await context.request('POST', `/admin/disputes/${id}/${action}`, { body });
        context.print(response.data, detail(response.data));
        return 0;
      }
      case 'resolve': {
        if (!id || !values.outcome) throw new CliError(`usage: ${USAGE}`, 2);
        const { body: response } = await context.request('POST', `/admin/disputes/${id}/resolve`, {
          body: { ...body, outcome: values.outcome },
        });
        context.print(response.data, detail(response.data));
        return 0;
      }
      case 'chargeback': {
        if (!id || values.notes === undefined) throw new CliError(`usage: ${USAGE}`, 2);
        const chargeback = {
          kind: 'chargeback',
          sell_order_id: id,
          notes: values.notes,
          ...(values.reference === undefined ? {} : { reference: values.reference }),
        };
        const { body: response } = await context.request('POST', '/admin/disputes', { body: chargeback });
        context.print(response.data, detail(response.data));
        return 0;
      }
      default:
        throw new CliError(`usage: ${USAGE}`, 2);
    }
  },
};
export default orders;
