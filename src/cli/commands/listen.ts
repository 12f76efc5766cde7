import { createServer } from 'node:http';
import { hostname } from 'node:os';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { CliError, type CommandGroup } from '../context.ts';

/** Headers a delivery carries that the merchant's handler needs, passed on untouched. */
const FORWARDED = ['content-type', 'x-service-signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'user-agent'];

/**
 * Like `stripe listen`: registers a temporary SANDBOX endpoint of its own pointing here (never touching the
 * merchant's real endpoints), prints its signing secret, shows each delivery and forwards it byte for byte, and
 * deletes the endpoint on exit (SIGINT/SIGTERM). Needs a test or sandbox key: live events never reach a developer's
 * machine.
 */
const listen: CommandGroup = {
  summary: 'receive sandbox webhooks locally on a temporary endpoint and forward them, signature intact, to your handler',
  usage:
    'mpay --api-key SANDBOX_KEY listen [--forward-to URL] [--events TYPE,TYPE] [--print-json] [--port 4242] [--host 127.0.0.1]\n' +
    '  registers a temporary sandbox endpoint here (removed on Ctrl-C), prints its signing secret; --events filters (default: all)',
  async run(args, context) {
    const { values } = parseArgs({
      args,
      options: {
        'forward-to': { type: 'string' },
        events: { type: 'string' },
        'print-json': { type: 'boolean', default: false },
        port: { type: 'string', default: '4242' },
        host: { type: 'string', default: '127.0.0.1' },
        // Older spelling: registering is what listen always does now.
        register: { type: 'boolean', default: false },
      },
    });
    const target = values['forward-to'];
    if (target !== undefined && !/^https?:\/\//.test(target)) throw new CliError(`usage: ${listen.usage}`, 2);
    const events = values.events?.split(',').map((type) => type.trim()).filter(Boolean);
    if (events !== undefined && events.length === 0) throw new CliError('--events needs at least one event type (or leave it out for all)', 2);

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
        if (values['print-json']) context.stdout.write(`${body.toString('utf8')}\n`);
        if (!target) {
          context.stdout.write(`${new Date().toISOString()}  <-- ${summary}\n`);
          response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
          return;
        }
        try {
          const forwarded = await fetch(target, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
          const text = await forwarded.text();
          context.stdout.write(`${new Date().toISOString()}  --> ${summary}  [${forwarded.status}]\n`);
          response.writeHead(forwarded.status, { 'content-type': forwarded.headers.get('content-type') ?? 'text/plain' }).end(text);
        } catch (error) {
          context.stdout.write(`${new Date().toISOString()}  --> ${summary}  [forward failed: ${(error as Error).message}]\n`);
          response.writeHead(502, { 'content-type': 'text/plain' }).end('forward failed');
        }
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) => reject(new CliError(`cannot listen on ${values.host}:${values.port}: ${error.message}`)));
      server.listen(Number(values.port), values.host, resolve);
    });
    const { port } = server.address() as AddressInfo;
    const host = values.host.includes(':') ? `[${values.host}]` : values.host;
    const here = `http://${host}:${port}/`;

    let endpoint_id: string;
    try {
      const { body } = await context.request('POST', '/v1/webhook-endpoints', {
        auth: 'key',
        body: { url: here, description: `mpay listen (pid ${process.pid} on ${hostname()})`, ...(events ? { enabled_events: events } : {}) },
      });
      if (body.data.mode !== 'sandbox') {
        // A live key created a live endpoint (only possible with WEBHOOK_ALLOW_PRIVATE_TARGETS): undo it at once.
        await context.request('DELETE', `/v1/webhook-endpoints/${body.data.id}`, { auth: 'key' });
        throw new CliError('mpay listen needs a test or sandbox key: live events are not sent to a local listener');
      }
      endpoint_id = body.data.id;
      context.stdout.write(`Your webhook signing secret is ${body.data.secret} (this listener's temporary sandbox endpoint ${endpoint_id})\n`);
    } catch (error) {
      await new Promise((resolve) => server.close(resolve));
      throw error;
    }
    context.stdout.write(`Ready. Listening on ${here}${target ? `, forwarding to ${target}` : ''}; events: ${events?.join(', ') ?? 'all'}. Ctrl-C stops and removes the endpoint.\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    try {
      await context.request('DELETE', `/v1/webhook-endpoints/${endpoint_id}`, { auth: 'key' });
      context.stdout.write(`Removed the temporary endpoint ${endpoint_id}.\n`);
    } catch (error) {
      context.stderr.write(`could not remove the temporary endpoint ${endpoint_id}: ${(error as Error).message} (DELETE /v1/webhook-endpoints/${endpoint_id})\n`);
    }
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    return 0;
  },
};
export default listen;
