import { parseArgs } from 'node:util';
import { CliError, type CommandGroup } from '../context.ts';

const merchants: CommandGroup = {
  summary: 'create merchants, issue and revoke merchant JWTs, invite dashboard users',
  usage:
    'mpay merchants create --name NAME [--webhook-url URL] | mpay merchants token MERCHANT_ID [--user USER_ID] [--mode live|sandbox] [--ttl SECONDS] | mpay merchants revoke-tokens MERCHANT_ID | mpay merchants add-user MERCHANT_ID --email EMAIL --role owner|developer|finance|viewer',
  async run(args, context) {
    const [action, ...rest] = args;
    const { values, positionals } = parseArgs({
      args: rest,
      options: {
        name: { type: 'string' },
        'webhook-url': { type: 'string' },
        user: { type: 'string' },
        mode: { type: 'string' },
        ttl: { type: 'string' },
        email: { type: 'string' },
        role: { type: 'string' },
      },
      allowPositionals: true,
    });
    if (action === 'create') {
      if (!values.name) throw new CliError('merchants create needs --name', 2);
      const { body } = await context.request('POST', '/admin/merchants', {
        body: { name: values.name, ...(values['webhook-url'] ? { webhook_url: values['webhook-url'] } : {}) },
      });
      const data = body.data;
      context.print(
        data,
        [
          `merchant ${data.merchant.id} (${data.merchant.name})`,
          `  live key:       ${data.api_keys.live}`,
          `  test key:       ${data.api_keys.test}`,
          `  sandbox key:    ${data.api_keys.sandbox}`,
          `  merchant JWT:   ${data.jwt}`,
          `  webhook secret: ${data.webhook_secret}`,
        ].join('\n'),
      );
      return 0;
    }
    if (action === 'token') {
      const [merchant_id] = positionals;
      if (!merchant_id) throw new CliError('merchants token needs MERCHANT_ID', 2);
      if (values.mode !== undefined && values.mode !== 'live' && values.mode !== 'sandbox')
        throw new CliError('--mode must be live or sandbox', 2);
      if (values.ttl !== undefined && !/^\d+$/.test(values.ttl))
        throw new CliError('--ttl must be a number of seconds', 2);
      const request_body = {
        ...(values.user ? { user_id: values.user } : {}),
        ...(values.mode ? { mode: values.mode } : {}),
        ...(values.ttl ? { ttl_seconds: Number(values.ttl) } : {}),
      };
      const { body } = await context.request('POST', `/admin/merchants/${merchant_id}/tokens`, { body: request_body });
      context.print(body.data, body.data.jwt);
      return 0;
    }
    if (action === 'revoke-tokens') {
      const [merchant_id] = positionals;
      if (!merchant_id) throw new CliError('merchants revoke-tokens needs MERCHANT_ID', 2);
      const { body } = await context.request('POST', `/admin/merchants/${merchant_id}/tokens/revoke`, {});
      context.print(
        body.data,
        `revoked every JWT and dashboard session of ${merchant_id} issued before ${body.data.tokens_not_before}`,
      );
      return 0;
    }
    if (action === 'add-user') {
      const [merchant_id] = positionals;
      if (!merchant_id || !values.email || !values.role)
        throw new CliError('merchants add-user needs MERCHANT_ID, --email and --role', 2);
      const { body } = await context.request('POST', `/admin/merchants/${merchant_id}/users`, {
        body: { email: values.email, role: values.role },
      });
      const data = body.data;
      context.print(
        data,
        [
          `dashboard user ${data.user.email} (${data.user.role}) invited`,
          `  invitation link (one use, expires ${data.invitation_expires_at}): ${data.invitation_url}`,
        ].join('\n'),
      );
      return 0;
    }
    throw new CliError(`usage: ${merchants.usage}`, 2);
  },
};
export default merchants;
