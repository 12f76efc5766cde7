import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { CliError, type CommandGroup } from '../context.ts';

/** Headers a delivery carries that the merchant's handler needs, passed on untouched. */
const FORWARDED = ['content-type', 'x-service-signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'user-agent'];

const listen: CommandGroup = {
  summary: 'receive webhooks locally and forward them, signature intact, to your handler (like `stripe listen`)',
  usage: 'mpay [--api-key KEY] listen --forward-to URL [--port 4242] [--host 127.0.0.1] [--register]   (--register points the webhook endpoint here)',
  async run(args, context) {
    const { values } = parseArgs({
      args,
      options: { 'forward-to': { type: 'string' }, port: { type: 'string', default: '4242' }, host: { type: 'string', default: '127.0.0.1' }, register: { type: 'boolean', default: false } },
    });
    const target = values['forward-to'];
    if (!target || !/^https?:\/\//.test(target)) throw new CliError(`usage: ${listen.usage}`, 2);
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', async () => {
        // The exact bytes received go on unchanged, so the handler verifies the same signature.
        const body = Buffer.concat(chunks);
        const headers: Record<string, string> = {};
        for (const name of FORWARDED) {
          const value = request.headers[name];
          if (typeof value === 'string') headers[name] = value;
        }
        let summary = '';
        try {
          const event = JSON.parse(body.toString('utf8')) as { id?: string; type?: string; payment_id?: string; sandbox?: boolean };
          summary = `${event.type ?? '?'} ${event.id ?? ''}${event.payment_id ? ` payment ${event.payment_id}` : ''}${event.sandbox ? ' [sandbox]' : ''}`;
        } catch {
          summary = `(${body.length} bytes, not JSON)`;
        }
        try {
          const forwarded = await fetch(target, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
          const text = await forwarded.text();
          process.stdout.write(`${new Date().toISOString()}  --> ${summary}  [${forwarded.status}]\n`);
          response.writeHead(forwarded.status, { 'content-type': forwarded.headers.get('content-type') ?? 'text/plain' }).end(text);
        } catch (error) {
          process.stdout.write(`${new Date().toISOString()}  --> ${summary}  [forward failed: ${(error as Error).message}]\n`);
          response.writeHead(502, { 'content-type': 'text/plain' }).end('forward failed');
        }
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) => reject(new CliError(`cannot listen on ${values.host}:${values.port}: ${error.message}`)));
      server.listen(Number(values.port), values.host, resolve);
    });
    const { port } = server.address() as AddressInfo;
    const here = `http://${values.host}:${port}/`;
    if (values.register) {
      // One endpoint serves live and sandbox events: this replaces the merchant's URL until it is set back.
      await context.request('PUT', '/v1/webhook-endpoint', { auth: 'key', body: { url: here } });
      process.stdout.write(`webhook endpoint set to ${here}\n`);
    }
    process.stdout.write(`Ready. Listening on ${here}, forwarding to ${target}${values.register ? '' : ` (point your webhook endpoint at ${here}, or add --register)`}. Ctrl-C stops.\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await new Promise((resolve) => server.close(resolve));
    return 0;
  },
};
export default listen;
