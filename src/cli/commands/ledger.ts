import { parseArgs } from 'node:util';
import { CliError, type CommandGroup } from '../context.ts';

const ledger: CommandGroup = {
  summary: 'check the PAY ledger invariants, read balances, make audited adjustments',
  usage:
    'mpay ledger verify | mpay ledger reconcile | mpay ledger balance ACCOUNT | mpay ledger adjust MERCHANT_ID --direction credit|debit --amount MICRO_PAY --reason TEXT [--sandbox] [--key KEY]',
  async run(args, context) {
    const [action, ...rest] = args;
    if (action === 'verify') {
      const { body } = await context.request('GET', '/admin/ledger/verify');
      const result = body.data;
      context.print(
        result,
        [
          `ledger ${result.ok ? 'OK' : 'BROKEN'}: ${result.accounts} accounts, ${result.transfers} transfers`,
          `  sum of balances:  ${result.total_balance_micro_pay} (must be 0)`,
          `  minted - burned:  ${result.minted_micro_pay} - ${result.burned_micro_pay} = ${result.minted_micro_pay - result.burned_micro_pay}`,
          `  in circulation:   ${result.circulation_micro_pay}`,
          ...result.problems.map((problem: string) => `  problem: ${problem}`),
        ].join('\n'),
      );
      return result.ok ? 0 : 1;
    }
    if (action === 'reconcile') {
      const { body } = await context.request('GET', '/admin/ledger/supply');
      const differences: {
        cause: string;
        key: string;
        problem: string;
        expected: unknown;
        actual: unknown;
        rows: { table: string; id: string }[];
        detail?: string;
      }[] = body.data.differences;
      context.print(
        differences,
        differences.length === 0
          ? 'ledger reconciled: no differences between the journal and the business records'
          : [
              `${differences.length} difference(s) between the ledger and the business records:`,
              ...differences.map((d) =>
                d.problem === 'identity'
                  ? `  identity ${d.cause} ${d.key}: ${d.detail ?? ''}`
                  : `  ${d.problem} ${d.cause} ${d.key}: expected ${JSON.stringify(d.expected)}, journal ${JSON.stringify(d.actual)}, rows ${d.rows.map((row) => `${row.table}:${row.id}`).join(' ') || '(none)'}`,
              ),
            ].join('\n'),
      );
      return differences.length === 0 ? 0 : 1;
    }
    if (action === 'balance') {
      const [account] = rest;
      if (!account) throw new CliError('ledger balance needs ACCOUNT (e.g. live:merchant:<id>:available)', 2);
      const { body } = await context.request('GET', `/admin/ledger/accounts/${encodeURIComponent(account)}`);
      context.print(body.data, `${body.data.account}: ${body.data.balance_micro_pay} micro-PAY`);
      return 0;
    }
    if (action === 'adjust') {
      const { values, positionals } = parseArgs({
        args: rest,
        options: {
          direction: { type: 'string' },
          amount: { type: 'string' },
          reason: { type: 'string' },
          sandbox: { type: 'boolean', default: false },
          key: { type: 'string' },
        },
        allowPositionals: true,
      });
      const [merchant_id] = positionals;
      if (!merchant_id || !values.direction || !values.amount || !values.reason)
        throw new CliError(`usage: ${ledger.usage}`, 2);
      if (!/^\d+$/.test(values.amount)) throw new CliError('--amount is an integer number of micro-PAY', 2);
      const { body } = await context.request('POST', `/admin/merchants/${merchant_id}/ledger-adjustments`, {
        body: {
          amount_micro_pay: Number(values.amount),
          direction: values.direction,
          reason: values.reason,
          is_sandbox: values.sandbox,
        },
        ...(values.key ? { headers: { 'idempotency-key': values.key } } : {}),
      });
      context.print(
        body.data,
        `${values.direction} ${values.amount} micro-PAY: available now ${body.data.available_micro_pay}`,
      );
      return 0;
    }
    throw new CliError(`usage: ${ledger.usage}`, 2);
  },
};
export default ledger;
