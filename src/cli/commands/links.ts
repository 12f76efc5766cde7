import { parseArgs } from 'node:util';
import { CliError, type CommandGroup } from '../context.ts';

const USAGE = [
  'mpay links create --title TEXT --currency THB|AUD|USD|SGD (--amount 1450.00 | --min 20 --max 2000)',
  '[--reusable] [--max-payments N] [--expires-at ISO_TIME] [--description TEXT] [--return-url URL]',
  '| list [--limit N] [--cursor C] | get ID | deactivate ID',
  "(a merchant's --api-key; amounts in major units)",
].join(' ');

interface Link {
  id: string;
  url: string;
  title: string;
  currency: string;
  amount_decimal: string | null;
  amount_range: { min_decimal: string; max_decimal: string } | null;
  state: string;
  payments_completed: number;
  max_payments: number | null;
  reusable: boolean;
  expires_at: string | null;
}

const amountOf = (link: Link) =>
  link.amount_decimal !== null
    ? `${link.amount_decimal} ${link.currency}`
    : link.amount_range
      ? `${link.amount_range.min_decimal}-${link.amount_range.max_decimal} ${link.currency}`
      : link.currency;

const line = (link: Link) =>
  `${link.id}  ${link.state.padEnd(8)} ${amountOf(link)}  paid ${link.payments_completed}${link.max_payments !== null ? `/${link.max_payments}` : link.reusable ? '' : '/1'}  ${link.title}\n  ${link.url}`;

const DECIMAL = /^\d{1,15}(\.\d+)?$/;

/** A merchant's payment links over the API (DESIGN 3c): create, list, read, deactivate. */
const links: CommandGroup = {
  summary: 'create, list, read and deactivate payment links (merchant API key)',
  usage: USAGE,
  async run(args, context) {
    const [action, ...rest] = args;
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        title: { type: 'string' },
        description: { type: 'string' },
        currency: { type: 'string' },
        amount: { type: 'string' },
        min: { type: 'string' },
        max: { type: 'string' },
        reusable: { type: 'boolean', default: false },
        'max-payments': { type: 'string' },
        'expires-at': { type: 'string' },
        'return-url': { type: 'string' },
        limit: { type: 'string' },
        cursor: { type: 'string' },
      },
    });
    const id = positionals[0];
    const needId = () => {
      if (!id) throw new CliError(`links ${action} needs a link ID`, 2);
      return encodeURIComponent(id);
    };
    switch (action) {
      case 'create': {
        if (!values.title || !values.currency) throw new CliError('links create needs --title and --currency', 2);
        const range = values.min !== undefined || values.max !== undefined;
        if (
          (values.amount === undefined) === !range ||
          (range && (values.min === undefined || values.max === undefined))
        )
          throw new CliError('links create needs --amount, or both --min and --max', 2);
        for (const name of ['amount', 'min', 'max'] as const)
          if (values[name] !== undefined && !DECIMAL.test(values[name]))
            throw new CliError(`--${name} is in major units, like 1450 or 1450.00`, 2);
        if (values['max-payments'] !== undefined && !/^\d{1,7}$/.test(values['max-payments']))
          throw new CliError('--max-payments is a whole number', 2);
        const body = {
          title: values.title,
          currency: values.currency.toUpperCase(),
          ...(values.description === undefined ? {} : { description: values.description }),
          ...(values.amount === undefined ? {} : { amount: values.amount }),
          ...(range ? { amount_range: { min: values.min, max: values.max } } : {}),
          ...(values.reusable ? { reusable: true } : {}),
          ...(values['max-payments'] === undefined ? {} : { max_payments: Number(values['max-payments']) }),
          ...(values['expires-at'] === undefined ? {} : { expires_at: values['expires-at'] }),
          ...(values['return-url'] === undefined ? {} : { return_url: values['return-url'] }),
        };
        const { body: response } = await context.request('POST', '/v1/payment-links', { auth: 'key', body });
        context.print(response.data, line(response.data));
        return 0;
      }
      case 'list': {
        const query = new URLSearchParams();
        if (values.limit) query.set('limit', values.limit);
        if (values.cursor) query.set('cursor', values.cursor);
        const { body: page } = await context.request('GET', `/v1/payment-links${query.size ? `?${query}` : ''}`, {
          auth: 'key',
        });
        const lines = (page.data as Link[]).map(line);
        if (page.next_cursor) lines.push(`more: --cursor ${page.next_cursor}`);
        context.print(page, lines.join('\n') || 'no payment links');
        return 0;
      }
      case 'get': {
        const { body: response } = await context.request('GET', `/v1/payment-links/${needId()}`, { auth: 'key' });
        context.print(response.data, line(response.data));
        return 0;
      }
      case 'deactivate': {
        const { body: response } = await context.request('POST', `/v1/payment-links/${needId()}/deactivate`, {
          auth: 'key',
        });
        context.print(response.data, line(response.data));
        return 0;
      }
      default:
        throw new CliError(`usage: ${USAGE}`, 2);
    }
  },
};
export default links;
