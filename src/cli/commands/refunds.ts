import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { CliError, type CommandGroup } from '../context.ts';

const USAGE = [
  'mpay refunds create PAYMENT_ID [--amount 250.00] [--reason duplicate|fraudulent|requested_by_customer|partial_delivery]',
  '[--funding merchant_transfer|pay_balance] [--idempotency-key UUID]',
  '| list [--status requires_action,pending,succeeded,failed,canceled] [--payment PAYMENT_ID] [--limit N] [--cursor C]',
  '| get ID | cancel ID',
  "(a merchant's --api-key; --amount in major units, default what remains)",
].join(' ');

interface Refund {
  id: string;
  payment_id: string;
  amount_decimal: string;
  currency: string;
  status: string;
  funding: string;
  reason: string | null;
  failure_reason: string | null;
  destination_details: { rail: string; masked: string } | null;
  next_action: { claim_url: string; expires_at: string } | null;
  receipt_url: string | null;
  created_at: string;
}

const line = (refund: Refund) =>
  `${refund.id}  ${refund.status.padEnd(15)} ${refund.amount_decimal} ${refund.currency}  payment ${refund.payment_id}  ${refund.funding}${refund.reason ? `  ${refund.reason}` : ''}`;

const detail = (refund: Refund) =>
  [
    line(refund),
    refund.next_action
      ? `  send the buyer: ${refund.next_action.claim_url} (until ${refund.next_action.expires_at})`
      : undefined,
    refund.destination_details
      ? `  destination: ${refund.destination_details.rail} ${refund.destination_details.masked}`
      : undefined,
    refund.failure_reason ? `  reason: ${refund.failure_reason}` : undefined,
    refund.receipt_url ? `  receipt: ${refund.receipt_url}` : undefined,
  ]
    .filter((text) => text !== undefined)
    .join('\n');

/** A merchant's refunds over the API (DESIGN 3c): create one of a payment, list, read, cancel. */
const refunds: CommandGroup = {
  summary: 'refund a payment, list, read and cancel refunds (merchant API key)',
  usage: USAGE,
  async run(args, context) {
    const [action, ...rest] = args;
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        amount: { type: 'string' },
        reason: { type: 'string' },
        funding: { type: 'string' },
        'idempotency-key': { type: 'string' },
        status: { type: 'string' },
        payment: { type: 'string' },
        limit: { type: 'string' },
        cursor: { type: 'string' },
      },
    });
    const id = positionals[0];
    const needId = (what: string) => {
      if (!id) throw new CliError(`refunds ${action} needs a ${what}`, 2);
      return encodeURIComponent(id);
    };
    switch (action) {
      case 'create': {
        const payment_id = needId('PAYMENT_ID');
        if (values.amount !== undefined && !/^\d{1,15}(\.\d+)?$/.test(values.amount))
          throw new CliError('--amount is in major units, like 250 or 250.00', 2);
        const body = {
          ...(values.amount === undefined ? {} : { amount: values.amount }),
          ...(values.reason === undefined ? {} : { reason: values.reason }),
          ...(values.funding === undefined ? {} : { funding: values.funding }),
        };
        // The same key again (a retry after a lost answer) returns the same refund instead of making another.
        const key = values['idempotency-key'] ?? randomUUID();
        const { body: response } = await context.request('POST', `/v1/payments/${payment_id}/refunds`, {
          auth: 'key',
          body,
          headers: { 'idempotency-key': key },
        });
        context.print(response.data, detail(response.data));
        return 0;
      }
      case 'list': {
        const query = new URLSearchParams();
        if (values.status) query.set('status', values.status);
        if (values.payment) query.set('payment_id', values.payment);
        if (values.limit) query.set('limit', values.limit);
        if (values.cursor) query.set('cursor', values.cursor);
        const { body: page } = await context.request('GET', `/v1/refunds${query.size ? `?${query}` : ''}`, {
          auth: 'key',
        });
        const lines = (page.data as Refund[]).map(line);
        if (page.next_cursor) lines.push(`more: --cursor ${page.next_cursor}`);
        context.print(page, lines.join('\n') || 'no refunds');
        return 0;
      }
      case 'get': {
        const { body: response } = await context.request('GET', `/v1/refunds/${needId('refund ID')}`, {
          auth: 'key',
        });
        context.print(response.data, detail(response.data));
        return 0;
      }
      case 'cancel': {
        const { body: response } = await context.request('POST', `/v1/refunds/${needId('refund ID')}/cancel`, {
          auth: 'key',
        });
        context.print(response.data, detail(response.data));
        return 0;
      }
      default:
        throw new CliError(`usage: ${USAGE}`, 2);
    }
  },
};
export default refunds;
